# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv if needed, install the Python dependencies and build the Rust core (release)
# into the venv -- only when something it is built from changed since the last install -- then
# run the demo or every test (cargo tests of the core, pytest).

VENV   ?= .venv
PY     := $(VENV)/bin/python
export VIRTUAL_ENV := $(abspath $(VENV))

# The install is redone only when one of these is newer than the stamp (the .py files need no
# reinstall: the package is installed in development mode).
STAMP        := $(VENV)/.commaware-installed
BUILD_INPUTS := pyproject.toml Cargo.toml $(wildcard Cargo.lock) \
                $(shell find crates -name '*.rs' -o -name Cargo.toml -o -name build.rs)

# No compiled core in the source tree (a fresh clone, or it was deleted): build whatever the stamp says.
ifeq ($(wildcard python/commaware/_core*.so),)
.PHONY: $(STAMP)
endif

.PHONY: demo test build rust-test py-test bench docs clean

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip maturin

# The stamp takes the time the build started, so a file edited during the build triggers the next one.
$(STAMP): $(BUILD_INPUTS) | $(PY)
	@echo "make: installing commaware into $(VENV) (maturin develop --release; log in $(VENV)/build.log)"
	@touch $@.new
	@$(VENV)/bin/maturin develop --release --extras dev -q > $(VENV)/build.log 2>&1 \
		|| { rm -f $@.new; tail -n 40 $(VENV)/build.log; echo "make: build failed; full log: $(VENV)/build.log"; exit 1; }
	@mv -f $@.new $@

build: $(STAMP)

# The examples on the 16-node cluster, then every paper's reproduction as a report
# (out/report/report.html, self-contained: open it in a browser).
demo: build
	$(VENV)/bin/commaware demo
	@# exit 1 says that some rows fail (ours contradicts a paper's claim: the summary line and the
	@# report list them); the report is complete then too, so only another code stops the demo
	$(VENV)/bin/commaware reproduce all --quick --out out/report --force; code=$$?; [ $$code -le 1 ] || exit $$code

rust-test:
	cargo test --release -p commaware-core

py-test: build
	$(PY) -m pytest -q

test: build rust-test py-test

# The docs site (MkDocs, Material) into site/; open site/index.html. --strict: a broken link or
# reference fails the build. tests/cli/test_docs.py runs every code block of it.
docs: build
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

bench: build
	$(PY) benches/bench_flows.py
	$(PY) benches/bench_penalties.py
	$(PY) benches/bench_interference.py
	$(PY) benches/bench_throughput.py
	$(PY) benches/bench_taskfarm.py
	$(PY) benches/bench_tiling.py
	$(PY) benches/bench_cosched.py
	$(PY) benches/bench_ti_replay.py
	$(PY) benches/bench_trace_show.py
	$(PY) benches/bench_sweep.py

clean:
	rm -rf $(VENV) target site
