# One image for every Engram process: the web server, the Celery worker and
# Celery beat differ only in their command (see docker-compose.yml).
FROM python:3.11-slim

# ENGRAM_PRODUCTION: an image is for serving behind a TLS proxy (HTTPS
# redirect, HSTS, secure cookies; README "Production"). Set it to false to
# try the image over plain HTTP.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    ENGRAM_DATA_DIR=/data \
    ENGRAM_PRODUCTION=true

WORKDIR /app
COPY pyproject.toml README.md ./
# Dependencies first, so a code change does not reinstall them. The project
# itself runs from /app (pyproject.toml declares no packages to install).
RUN pip install .
COPY . .
RUN useradd --system --home /app engram \
    && mkdir -p /data && chown engram /data \
    && ENGRAM_SECRET_KEY=build python manage.py collectstatic --noinput

USER engram
VOLUME ["/data"]
EXPOSE 8000
# As ./run serves it: ASGI with uvicorn workers, so MCP at /mcp is served too.
CMD ["gunicorn", "engram_site.asgi:application", "--worker-class", "uvicorn_worker.UvicornWorker", "--bind", "0.0.0.0:8000", "--workers", "2", "--access-logfile", "-"]
