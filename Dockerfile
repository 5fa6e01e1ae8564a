# The reconciler image: `omereconcile run` (with omerender inside).
#
# The wheels come from the build context (wheels/), built on the host, so the build itself needs no
# package index:   python3 -m pip wheel --wheel-dir wheels '.[reconcile]' && docker build .
# testbed/image.sh does exactly that with a Debian base made by mmdebstrap (--build-arg BASE=...).
# BASE must carry Python 3.11 (the minor the native wheels are built for) with venv.
ARG BASE=docker.io/library/python:3.11-slim-bookworm

FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY wheels /wheels
# --no-index: only what the host built goes in. pip, setuptools and bytecode caches stay behind.
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-index --find-links /wheels 'omerender[reconcile]' \
 && /opt/venv/bin/pip uninstall --yes pip setuptools \
 && find /opt/venv -name __pycache__ -prune -exec rm -rf {} +

FROM ${BASE}
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# Non-root, matching deploy/deployment.yaml's runAsNonRoot and read-only root filesystem.
USER 65532:65532
# Exec form, so SIGTERM reaches Python and the reconciler stops gracefully.
ENTRYPOINT ["omereconcile"]
CMD ["run"]
