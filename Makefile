# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv if needed, install the Python dependencies, build the Rust core once
# (release) into the venv, then run the demo or every test (cargo tests of the core, pytest).

VENV   ?= .venv
PY     := $(VENV)/bin/python
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: demo test build rust-test py-test bench clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip maturin

build: $(PY)
	$(VENV)/bin/maturin develop --release --extras dev -q

demo: build
	$(VENV)/bin/commaware demo

rust-test:
	cargo test --release -p commaware-core

py-test:
	$(PY) -m pytest -q

test: build rust-test py-test

bench: build
	$(PY) benches/bench_flows.py

clean:
	rm -rf $(VENV) target
