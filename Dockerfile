# Circus's Discord frontend (`circus bot`). Models come from outside the image (Ollama in
# docker-compose.yml, or any hosted provider): the embedded SmolLM2 extra is left out on purpose.
# The `voice` extra (wheels only: eSpeak NG and libsndfile) gives /read its offline voices.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY . /app
# The shipped scene templates are package data (engine/scene_templates) and install with the
# package: the ./scenes mount in docker-compose.yml cannot hide them, and no run writes into them.
RUN pip install '.[voice]' \
    && printf '%s\n' \
        '#!/bin/sh' \
        'set -e' \
        'mkdir -p "$CIRCUS_SCENES_DIR"' \
        'exec "$@"' \
        > /usr/local/bin/circus-entrypoint \
    && chmod +x /usr/local/bin/circus-entrypoint

# Scenes live in /app/scenes (a volume in docker-compose.yml); the templates ship inside the
# package. Container-only paths: they are set here and in docker-compose.yml, never in .env.
ENV CIRCUS_SCENES_DIR=/app/scenes

# Run unprivileged, as the uid that owns ./scenes on the host (docker-compose passes the
# user's UID/GID, default 1000): scene files written into the mounted folder stay the
# writer's own, editable in Obsidian, never root-owned.
ARG UID=1000
ARG GID=1000
RUN groupadd --gid "$GID" circus \
    && useradd --uid "$UID" --gid "$GID" --create-home --shell /usr/sbin/nologin circus \
    && mkdir -p /app/scenes \
    && chown -R "$UID:$GID" /app/scenes
USER circus
ENV HOME=/home/circus

ENTRYPOINT ["circus-entrypoint"]
CMD ["circus", "bot"]
