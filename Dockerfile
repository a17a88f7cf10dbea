# Pao De Kuai server image.  Meant to run next to a real Redis (see
# docker-compose.yml); without PAODEKUAI_REDIS_URL it falls back to the embedded
# Redis in /app/data, which then needs a volume to survive the container.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, so code edits do not reinstall them: a stub package
# with the real pyproject resolves and caches the dependency layer.
COPY pyproject.toml README.md ./
RUN mkdir server && touch server/__init__.py \
    && pip install . \
    && pip uninstall -y paodekuai \
    && rm -rf server build *.egg-info

COPY server ./server
COPY client ./client
RUN pip install --no-deps . && rm -rf build *.egg-info

RUN useradd --system --uid 10001 --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin paodekuai \
    && mkdir -p /app/data && chown paodekuai:paodekuai /app/data && chmod 700 /app/data

USER paodekuai

# A non-editable install does not carry client/, so point at the copy above.
ENV PAODEKUAI_HOST=0.0.0.0 \
    PAODEKUAI_PORT=8000 \
    PAODEKUAI_DATA_DIR=/app/data \
    PAODEKUAI_CLIENT_DIR=/app/client

EXPOSE 8000

# No curl in -slim; urlopen raises on a 503, so any failure is a non-zero exit.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PAODEKUAI_PORT', '8000') + '/healthz', timeout=4)"]

# Exec form: paodekuai gets SIGTERM from `docker stop` and shuts down cleanly.
CMD ["paodekuai", "serve", "--host", "0.0.0.0"]
