# The card room in one container: uvicorn serving the app, after `alembic upgrade
# head` brings the database (PostgreSQL via DATABASE_URL, else SQLite in
# /app/data) up to date.  docker-compose.yml runs several of these behind a
# proxy, on PostgreSQL + Redis, with the migration done once beforehand.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATA_DIR=/app/data

WORKDIR /app

# Dependencies first, so a code change does not reinstall them.  They are read
# from pyproject.toml (pinned there); all ship wheels but http-ece (pywebpush's,
# pure Python, built from its source by pip): no compiler needed.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install --no-cache-dir -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The code belongs to root; the server may write only its data directory.
RUN useradd --no-log-init --system --uid 10001 --user-group --home-dir /app --shell /usr/sbin/nologin cardroom \
    && mkdir -p /app/data \
    && chown cardroom:cardroom /app/data
COPY alembic.ini ./
COPY migrations ./migrations
COPY app ./app
COPY static ./static

USER 10001:10001
VOLUME ["/app/data"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=4)"]

# exec: uvicorn becomes PID 1 and gets the stop signal, so rooms shut down cleanly.
CMD ["sh", "-c", "alembic upgrade head && exec uvicorn app.main:app --host 0.0.0.0 --port 8000 --ws websockets-sansio --ws-per-message-deflate false --ws-max-size 65536"]
