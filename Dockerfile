# The reconciler image: omereconcile run (with omerender inside). Not built in this repository's CI:
# the development machines have no Docker engine. Builder and runtime share one Python minor so that
# native wheels (pydantic-core, jsonschema-rs) copied with the venv keep working.
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
COPY omerender ./omerender
COPY omereconcile ./omereconcile
RUN pip install --only-binary :all: '.[reconcile]'

FROM python:3.11-slim
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# Non-root, matching deploy/deployment.yaml's runAsNonRoot and read-only root filesystem.
USER 65532:65532
# Exec form, so SIGTERM reaches Python and the reconciler stops gracefully.
ENTRYPOINT ["omereconcile", "run"]
