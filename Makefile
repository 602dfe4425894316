# `make run` and `make test` work on a fresh machine: both create .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-slow sim lint typecheck bench bench-guard install clean backup

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# --ws-max-size: frames over 64 KiB are cut off by the server before the app
# reads them (app/core/config.py WS_MAX_SIZE).  No permessage-deflate: a move's views are about 0.5 KB, and compressing each
# frame for each socket cost ~5 us of CPU apiece plus zlib state per socket.
run: $(STAMP)
	mkdir -p data
	$(BIN)/alembic upgrade head
	$(BIN)/uvicorn app.main:app --host $(HOST) --port $(PORT) --ws websockets-sansio --ws-per-message-deflate false --ws-max-size 65536

# a consistent copy of the live database under backups/ (or DEST=...): SQLite's
# online backup API, or pg_dump for PostgreSQL (app/db/backup.py; README "Backups")
backup: $(STAMP)
	$(BIN)/python -m app.db.backup $(DEST)

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Tests run in JOBS processes (pytest-xdist), each with its own servers,
# databases and browser; a worker that runs dry takes tests from the other's
# queue.  Most tests wait on sockets, servers and Chromium more than they
# compute: on 2 cores `make test` took 20 minutes in one process, 8 in two.
JOBS ?= 2
XDIST := -n $(JOBS) --dist worksteal

# the whole suite but the long chaos and soak runs (`slow`), which .ci/run adds
test: $(STAMP) lint typecheck
	$(BIN)/python -m pytest -m "not slow" $(XDIST)

# The long runs side by side, then the hot path guard alone: it counts
# instructions, but its batches follow its pacing only on a quiet machine.
# -rA prints what each run said (its seeds, planted bugs, figures).
test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow --ignore=tests/bench $(XDIST) -rA
	$(BIN)/python -m pytest -m slow tests/bench -s

# the room simulator over any number of seeds (tests/sim): `make sim SEEDS=20000`;
# `SIM_SEED=<n> make sim` replays one seed and prints its trace
SEEDS ?= 2000
FIRST ?= 0
sim: $(STAMP)
	$(BIN)/python -m tests.sim.run --seeds $(SEEDS) --first $(FIRST)

bench: $(STAMP)
	$(BIN)/python bench/engines.py

# the hot path guard alone: the card room's instructions per action against the
# bare fan-out server's, both under callgrind in one run (bench/guard.py);
# exits 1 under what the card room holds, 73% (bench/guard.py HELD; the floor is 70%)
bench-guard: $(STAMP)
	$(BIN)/python bench/guard.py --check

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
