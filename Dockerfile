# CPU-only image running `auditor` as its entrypoint.
#   docker build -t auditor .
#   docker run --rm -v "$PWD:/data" -w /data auditor run audit.yaml --out reports/today
#   docker run --rm -v "$PWD/out:/out" auditor demo --out /out
# Installs with the Makefile's pins (constraints.txt). The entrypoint (auditor/container.py)
# starts as root and runs `auditor` as the owner of the output folder (--out, else /data):
# your files when you own the mounted folder, root's when Docker created it as root.
# `docker run --user "$(id -u):$(id -g)"` skips the switch (the output folder must then be
# writable by that user).
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /opt/auditor

# torch first, from the CPU wheel index and at the version constraints.txt pins, so the
# `probes` extra never pulls a CUDA build and matches what the tests ran with.
COPY constraints.txt ./
RUN pip install -c constraints.txt --index-url https://download.pytorch.org/whl/cpu torch

COPY pyproject.toml README.md ./
COPY auditor ./auditor
COPY checks ./checks
RUN pip install -c constraints.txt ".[probes,tokens,hf,gx]"

WORKDIR /data
ENTRYPOINT ["python", "-m", "auditor.container"]
CMD ["--help"]
