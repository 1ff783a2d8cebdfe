# syntax=docker/dockerfile:1
# kubedra's container image: the wheel built from this checkout, installed into a slim Python base, run as a
# non-root user. Nothing is written outside /tmp (HOME and caches), so it runs with a read-only root
# filesystem and an emptyDir on /tmp (deploy/chart/kubedra does this). Build: `make image`.
# The base is pinned to a full release; pin it by digest (python:...@sha256:...) where your policy wants it.
ARG PYTHON_IMAGE=python:3.12.8-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
# kubedra's wheel and the wheels of its dependencies (binary wheels where PyPI has them)
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/tmp \
    XDG_CACHE_HOME=/tmp/cache
# DL3013 (pin pip versions): --no-index installs only the wheels built above from this checkout, so the version is
# the checkout's own and nothing else can be picked.
# hadolint ignore=DL3013
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links /wheels kubedra \
    && groupadd --gid 10001 kubedra \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin kubedra
USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["kubedra"]
CMD ["--help"]
