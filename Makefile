# The two commands in the README: `make demo` (main job) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: setup demo test test-fast bench clean

setup: $(VENV)/.installed

# torch first: the CPU build on disk; anything else would pull a multi-GB CUDA wheel.
$(VENV)/.installed: pyproject.toml setup.py
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e ".[dev]"
	# colpali-engine only for the MaxSim agreement test/benchmark: --no-deps, because its
	# torchvision dependency breaks beside the CPU torch (see kernels/maxsim/colpali_compat.py).
	$(PIP) install -q --no-deps colpali-engine==0.3.18
	touch $@

demo: setup
	HF_HUB_OFFLINE=1 $(VENV)/bin/docray demo

test: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest -m "not gpu" -q

test-fast: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest -m "not gpu and not corpus and not slow" -q

clean:
	rm -rf .docray out
