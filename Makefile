# Two entry points for a fresh machine: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install demo test bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev,rl]"
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(PY) -m tablegym.experiments.demo

test: install
	$(PY) -m pytest -q

bench: install
	$(VENV)/bin/tablegym bench search
	$(VENV)/bin/tablegym bench sim-solve
	$(VENV)/bin/tablegym bench envs

clean:
	rm -rf $(VENV) runs .pytest_cache .benchmarks
