# The two commands a new user needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WORKLOAD ?= builtin:transformer

.PHONY: run test install clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/tfturbo gui $(WORKLOAD)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
