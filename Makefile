# The two commands a new user needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WORKLOAD ?= builtin:transformer

.PHONY: run test lint install clean bench install-desktop

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/tfturbo gui $(WORKLOAD)

# The linter and the type checker first (configured in pyproject.toml; seconds, mypy's cache in .mypy_cache):
# either one's finding fails the target before the suite starts.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# Two workers, a test file each at a time (its shared backend runs stay in one process), the longest files
# first (tests/conftest.py's order): most of the suite's time is backend processes, one core each.
test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

bench: $(STAMP)
	for b in benchmarks/[!_]*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache

# The desktop entry and icon for the current user (XDG paths): tfturbo then appears in the application menu.
XDG_DATA_HOME ?= $(HOME)/.local/share
install-desktop: $(STAMP)
	mkdir -p $(XDG_DATA_HOME)/applications $(XDG_DATA_HOME)/icons/hicolor/scalable/apps
	sed 's|^Exec=tfturbo |Exec=$(abspath $(BIN))/tfturbo |' resources/tfturbo.desktop > $(XDG_DATA_HOME)/applications/tfturbo.desktop
	cp resources/icons/tfturbo.svg $(XDG_DATA_HOME)/icons/hicolor/scalable/apps/tfturbo.svg
	for s in 16 24 32 48 64 128 256; do \
		mkdir -p $(XDG_DATA_HOME)/icons/hicolor/$${s}x$${s}/apps; \
		cp resources/icons/tfturbo-$$s.png $(XDG_DATA_HOME)/icons/hicolor/$${s}x$${s}/apps/tfturbo.png; \
	done
	@if command -v update-desktop-database >/dev/null; then update-desktop-database $(XDG_DATA_HOME)/applications; fi
	@if command -v gtk-update-icon-cache >/dev/null; then gtk-update-icon-cache -qt $(XDG_DATA_HOME)/icons/hicolor; fi
	@echo "installed $(XDG_DATA_HOME)/applications/tfturbo.desktop and the tfturbo icon"
