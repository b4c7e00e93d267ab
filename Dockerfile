# CPU-only image running `auditor` as its entrypoint.
#   docker build -t auditor .
#   docker run --rm -v "$PWD:/data" -w /data auditor run audit.yaml --out reports/today
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 MPLBACKEND=Agg
WORKDIR /opt/auditor

# torch from the CPU wheel index first, so the `probes` extra never pulls a CUDA build.
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch>=2.2,<3"

COPY pyproject.toml README.md ./
COPY auditor ./auditor
COPY checks ./checks
RUN pip install ".[probes,tokens]" && useradd --create-home auditor

USER auditor
WORKDIR /data
ENTRYPOINT ["auditor"]
CMD ["--help"]
