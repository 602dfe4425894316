"""Bots against bots on duplicate deals, with confidence intervals.

Each deal (a seed) is played once per rotation of the line-up round the
table, so every bot holds every seat's cards of that deal and the luck of the
deal cancels out.  A match is a game, a seat count and a line-up such as
`strong,normal,normal,normal`; the first bot is the one the match is about.
For each bot level the arena prints:

- `win`: its share of first places (a tie for first shares the credit;
  Posso: the lowest total), with a 95% confidence interval;
- `place`: its mean place (1 is first) and `score`: its mean score as the
  game counts it (cards left, property cards, Posso total);
- think time per move, p50 and p99, in milliseconds.

The interval is a normal one over deals, not over games: the rotations of one
deal share its cards, so they are not independent draws.

Results go to a JSON-lines file (`--results`), one line per deal; a run that
is stopped (Ctrl-C, a lost machine) resumes where it was by running the same
command again: deals already in the file are not played twice, and the
figures are always computed from the whole file.

Usage:
  nice -n 10 .venv/bin/python bench/arena.py                 # every default match
  .venv/bin/python bench/arena.py --game possum --deals 250 --lineup normal,random
  .venv/bin/python bench/arena.py --game bigtwo --lineup strong,normal --budget 120
A line-up shorter than the seat count is filled with its last bot.  Besides
the levels a host can pick, a line-up may name `random` and `search` (the
determinized search, also where the strong level is the heuristic: Possum):
  .venv/bin/python bench/arena.py --game possum --seats 4 --lineup search,normal
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots.base import Bot
from app.bots.levels import ARENA_LEVELS, bot_for, heuristic_for
from app.bots.search import search_bot
from app.games import GAMES

#: every game and seat count the arena plays by default, each as
#: (game, seats, options, line-ups)
DEFAULT_MATCHES: list[tuple[str, int, dict[str, Any], list[str]]] = [
    ("bigtwo", 4, {}, ["normal,random", "strong,normal", "normal,easy"]),
    ("possum", 2, {}, ["normal,random", "strong,normal"]),
    ("possum", 4, {}, ["normal,random", "strong,normal", "normal,easy"]),
    ("possum", 6, {}, ["normal,random", "strong,normal"]),
    ("possession", 2, {}, ["normal,random", "strong,normal", "normal,easy"]),
    ("possession", 3, {}, ["normal,random", "strong,normal"]),
    ("possession", 4, {}, ["normal,random", "strong,normal"]),
    ("posso", 2, {}, ["normal,random", "strong,normal"]),
    ("posso", 4, {}, ["normal,random", "strong,normal", "normal,easy"]),
]
#: the arena's own level: the determinized search itself, also for a game
#: whose strong level is its heuristic (Possum: docs/bots.md, "Figures")
SEARCH = "search"
LEVELS = (*ARENA_LEVELS, SEARCH)
#: the levels that take --budget and --wall-cap
SEARCHING = frozenset({"strong", SEARCH})

#: Posso is ten long hands; the arena plays the first few and ranks by totals
POSSO_HANDS = 3
#: a game that runs longer than this many actions is a bug, not a slow game
MAX_ACTIONS = 20_000


@dataclass(frozen=True)
class Match:
    game: str
    seats: int
    options: dict[str, Any]
    lineup: tuple[str, ...]
    budget: int | None
    hands: int
    wall_cap: float | None = None

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    def title(self) -> str:
        opts = f" {json.dumps(self.options)}" if self.options else ""
        hands = f", {self.hands} hands" if self.game == "posso" else ""
        budget = ""
        if SEARCHING & set(self.lineup):
            budget = f", budget {self.budget or 'default'}"
            if self.wall_cap is not None:
                budget += f", cap {self.wall_cap:g} s"
        return f"{self.game} {self.seats} seats{opts}{hands}{budget}: {' v '.join(self.lineup)}"


@dataclass
class SeatOutcome:
    level: str
    win: float
    place: int
    score: float


@dataclass
class DealOutcome:
    match: str
    seed: int
    #: one list per rotation, one entry per seat
    games: list[list[SeatOutcome]] = field(default_factory=list)
    #: level -> think times (ms) of every move in every rotation
    think_ms: dict[str, list[float]] = field(default_factory=dict)
    actions: int = 0


def seating(lineup: tuple[str, ...], rotation: int) -> list[str]:
    """The levels at each seat in one rotation: the line-up shifted by `rotation`."""
    n = len(lineup)
    return [lineup[(s - rotation) % n] for s in range(n)]


def arena_bot(game: str, level: str, budget: int | None, wall_cap: float | None) -> Bot:
    """A seat's bot: a level a host can pick (app/bots/levels.py), random, or
    the search."""
    if level != SEARCH:
        return bot_for(game, level, budget, wall_cap)
    found = search_bot(game, heuristic_for(game), budget, wall_cap)
    if found is None:
        raise SystemExit(f"{game} has no search")
    return found


def play_deal(match: Match, seed: int) -> DealOutcome:
    """Every rotation of one deal.  Bots and the arena's own choices are seeded
    from the deal and rotation, so the same command replays the same games."""
    game = GAMES[match.game]
    out = DealOutcome(match=match.key(), seed=seed)
    times: dict[str, list[float]] = defaultdict(list)
    for rotation in range(match.seats):
        levels = seating(match.lineup, rotation)
        bots = [arena_bot(match.game, level, match.budget, match.wall_cap) for level in levels]
        rngs = [random.Random(f"{seed}:{rotation}:{s}") for s in range(match.seats)]
        order = random.Random(f"{seed}:{rotation}:order")
        state = game.new_game(match.seats, match.options, seed)
        start_hand = getattr(state, "hand_no", 0)
        for _ in range(MAX_ACTIONS):
            if game.result(state) is not None:
                break
            if match.game == "posso" and state.hand_no >= start_hand + match.hands:
                break
            acting = sorted(game.to_act(state))
            if not acting:
                state, _ = game.apply(state, None, {"type": "timeout"})
                continue
            seat = order.choice(acting)
            legal = game.legal_actions(state, seat)
            view = game.view(state, seat)
            t0 = time.perf_counter()
            action = bots[seat].choose(view, legal, seat, rngs[seat])
            times[levels[seat]].append(round((time.perf_counter() - t0) * 1000, 3))
            state, _ = game.apply(state, seat, action)
            out.actions += 1
        else:
            raise RuntimeError(f"{match.title()}: deal {seed} did not end")
        out.games.append(outcome(match, state, levels))
    out.think_ms = dict(times)
    return out


def outcome(match: Match, state: Any, levels: list[str]) -> list[SeatOutcome]:
    """Each seat's credit for first place, its place and its score."""
    if match.game == "posso":
        scores = list(state.totals)
        places = [[s for s in range(match.seats) if scores[s] == t] for t in sorted(set(scores))]
    else:
        result = GAMES[match.game].result(state)
        assert result is not None
        places, scores = result["places"], result["scores"]
    out = []
    for seat, level in enumerate(levels):
        rank = next(i for i, group in enumerate(places) if seat in group)
        win = 1.0 / len(places[0]) if rank == 0 else 0.0
        out.append(SeatOutcome(level, win, rank + 1, float(scores[seat])))
    return out


# -- the results file -------------------------------------------------------------


def load(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    done: dict[tuple[str, int], dict[str, Any]] = {}
    if not path.exists():
        return done
    with path.open() as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
                done[(row["match"], int(row["seed"]))] = row
            except (ValueError, KeyError) as err:  # a line cut short by a stop
                print(f"{path}:{n}: skipped an unreadable line ({err})", file=sys.stderr)
    return done


# -- figures ----------------------------------------------------------------------


def mean_ci(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% normal confidence interval."""
    if not values:
        return math.nan, math.nan
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, math.nan
    return m, 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def percentile(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(match: Match, rows: list[dict[str, Any]]) -> None:
    games = sum(len(r["games"]) for r in rows)
    print(f"\n{match.title()}  ({len(rows)} deals, {games} games)")
    if not rows:
        return
    fair = 1.0 / match.seats
    for level in dict.fromkeys(match.lineup):
        # per deal: the level's mean over its seats and the rotations
        wins, places, scores = [], [], []
        for r in rows:
            seats = [s for g in r["games"] for s in g if s["level"] == level]
            wins.append(statistics.fmean(s["win"] for s in seats))
            places.append(statistics.fmean(s["place"] for s in seats))
            scores.append(statistics.fmean(s["score"] for s in seats))
        win, win_ci = mean_ci(wins)
        place, place_ci = mean_ci(places)
        score, score_ci = mean_ci(scores)
        think = [t for r in rows for t in r["think_ms"].get(level, [])]
        print(
            f"  {level:7s} win {100 * win:5.1f}% ± {100 * win_ci:4.1f} (fair {100 * fair:.0f}%)"
            f"  place {place:4.2f} ± {place_ci:4.2f}  score {score:6.1f} ± {score_ci:4.1f}"
            f"  think p50 {percentile(think, 0.5):8.3f} ms  p99 {percentile(think, 0.99):8.3f} ms"
            f"  ({len(think)} moves)"
        )


# -- running ----------------------------------------------------------------------


def matches(args: argparse.Namespace) -> Iterator[Match]:
    for game, seats, options, lineups in DEFAULT_MATCHES:
        if args.game not in ("all", game) or (args.seats and seats != args.seats):
            continue
        if args.options is not None:
            options = json.loads(args.options)
        for text in [args.lineup] if args.lineup else lineups:
            levels = text.split(",")
            for level in levels:
                if level not in LEVELS:
                    raise SystemExit(f"unknown level {level!r}: one of {', '.join(LEVELS)}")
            full = tuple(levels + [levels[-1]] * (seats - len(levels)))[:seats]
            searching = bool(SEARCHING & set(full))
            budget = args.budget if searching else None
            cap = args.wall_cap if searching else None
            yield Match(game, seats, options, full, budget, args.hands, cap)


def run(args: argparse.Namespace) -> None:
    path = Path(args.results)
    done = load(path)
    todo = [
        (m, seed)
        for m in matches(args)
        for seed in range(args.first_seed, args.first_seed + args.deals)
        if (m.key(), seed) not in done
    ]
    if todo:
        print(f"{len(todo)} deals to play ({len(done)} already in {path}), {args.jobs} processes")
    t0 = time.perf_counter()
    with path.open("a") as out, ProcessPoolExecutor(max_workers=args.jobs) as pool:
        pending: dict[Future[DealOutcome], tuple[Match, int]] = {}
        queue = iter(todo)
        finished = 0
        try:
            while True:
                while len(pending) < 2 * args.jobs:
                    nxt = next(queue, None)
                    if nxt is None:
                        break
                    pending[pool.submit(play_deal, *nxt)] = nxt
                if not pending:
                    break
                ready, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in ready:
                    pending.pop(fut)
                    row = asdict(fut.result())
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    done[(row["match"], row["seed"])] = row
                    finished += 1
                    if finished % args.progress == 0:
                        dt = time.perf_counter() - t0
                        print(f"  {finished}/{len(todo)} deals, {dt:.0f} s", flush=True)
        except KeyboardInterrupt:
            print("stopped: run the same command again to resume", file=sys.stderr)
            for fut in pending:
                fut.cancel()
            raise
    for m in matches(args):
        rows = [
            done[(m.key(), seed)]
            for seed in range(args.first_seed, args.first_seed + args.deals)
            if (m.key(), seed) in done
        ]
        report(m, rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--game", default="all", choices=["all", *sorted(GAMES)])
    p.add_argument("--seats", type=int, default=0, help="only this seat count (0: every one)")
    p.add_argument("--options", help="the game's options as JSON (default: the match's own)")
    p.add_argument(
        "--lineup", help="levels from the first seat, e.g. strong,normal (also random, search)"
    )
    p.add_argument("--deals", type=int, default=50, help="deals per match (default 50)")
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument(
        "--budget", type=int, default=None, help="the strong (or search) bot's playouts a move"
    )
    p.add_argument(
        "--wall-cap",
        type=float,
        default=None,
        help="the strong bot's time cap a move in seconds (default: its own); past it, "
        "it plays the heuristic's move, so on a loaded machine raise it to measure the search",
    )
    p.add_argument("--hands", type=int, default=POSSO_HANDS, help="Posso hands per game")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--results", default="arena-results.jsonl", help="where deals are kept")
    p.add_argument("--progress", type=int, default=25, help="print a line every N deals")
    run(p.parse_args())


if __name__ == "__main__":
    main()
