# attn-tlm: `make demo` and `make test` do all set-up on a fresh Debian machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: setup systemc chromium demo test lint bench validate validate-hbm3 clean scalesim cacti-table

setup: systemc $(STAMP)
	@$(BIN)/python -m tlm_models.runtime.aot

# The system SystemC 2.3.4 (Debian libsystemc-dev), unless SYSTEMC_HOME names a user build.
systemc:
	@if [ -n "$$SYSTEMC_HOME" ]; then \
	  echo "using SystemC from SYSTEMC_HOME=$$SYSTEMC_HOME"; \
	elif [ -f /usr/include/systemc.h ] && ls /usr/lib/libsystemc.so /usr/lib/*/libsystemc.so 2>/dev/null | grep -q .; then \
	  :; \
	elif [ "$$(id -u)" = "0" ]; then \
	  echo "installing libsystemc-dev with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsystemc-dev; \
	else \
	  echo "SystemC is missing. Run:  sudo apt-get install libsystemc-dev   (or set SYSTEMC_HOME)"; \
	  exit 1; \
	fi

# A real browser for the report check of `make test` (tests/test_report_html.py): Debian's
# chromium, installed like SystemC when missing (about 290 MB; a minute or two to fetch).
chromium:
	@if command -v chromium >/dev/null 2>&1; then \
	  :; \
	elif [ "$$(id -u)" = "0" ]; then \
	  echo "installing chromium with apt-get (for the report check in a real browser; about 290 MB)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  echo "chromium installed"; \
	else \
	  echo "chromium is missing. Run:  sudo apt-get install chromium"; \
	  exit 1; \
	fi

# One line per phase, and one per package compiled for want of a wheel or large download;
# a failing step prints its whole output (tools/quiet_step.py). --prefer-binary: an older
# release with a wheel over a newer one that would compile (cppyy's bindings: minutes).
$(STAMP): pyproject.toml
	@$(PYTHON) tools/quiet_step.py "creating $(VENV)" -- $(PYTHON) -m venv $(VENV)
	@$(PYTHON) tools/quiet_step.py "upgrading pip" -- $(BIN)/pip install --upgrade pip
	@$(PYTHON) tools/quiet_step.py "installing attn-tlm and its Python packages" -- \
	  $(BIN)/pip install --prefer-binary -e '.[dev]'
	@touch $@

demo: setup
	$(BIN)/attn-tlm demo $(if $(FULL),--full,) $(if $(EXACT),--exact,)

lint: setup
	$(BIN)/ruff check tlm_models tests tools
	$(BIN)/ruff format --check tlm_models tests tools
	$(BIN)/mypy

test: lint chromium scalesim
	@$(BIN)/python -m tests.cpp_build
	$(BIN)/python -m pytest -q -n $(JOBS) tests

# SCALE-Sim v3, the reference of the systolic PE timing, in a virtual environment of its own
# under build/ (it needs NumPy < 2.3; tests/scalesim_reference.py pins it). Kept once made.
scalesim: setup
	@$(PYTHON) tools/quiet_step.py "installing SCALE-Sim (the systolic PE timing's reference)" -- \
	  $(BIN)/python -m tests.scalesim_reference

bench: setup
	$(BIN)/python tools/bench_all.py

# Bank-level DRAM against the cycle-accurate reference (DRAMSys, built outside the project from
# its public source; DRAMSYS_SOURCE / DRAMSYS_TAG / DRAMSYS_WORK choose where from and where to).
validate: setup
	$(BIN)/python tools/dram_reference/validate.py $(if $(REQUESTS),--requests $(REQUESTS),)

# HBM3 against Ramulator 2 (DRAMSys 5.0 has no HBM3), built outside the project from its public
# source against Debian's yaml-cpp and fmt (installed like SystemC when missing);
# RAMULATOR_SOURCE / RAMULATOR_REV / RAMULATOR_WORK choose where from and where to.
validate-hbm3: setup
	@if [ -f /usr/include/yaml-cpp/yaml.h ] && [ -f /usr/include/fmt/format.h ]; then \
	  :; \
	elif [ "$$(id -u)" = "0" ]; then \
	  echo "installing libyaml-cpp-dev and libfmt-dev with apt-get"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libyaml-cpp-dev libfmt-dev; \
	else \
	  echo "yaml-cpp and fmt are missing. Run:  sudo apt-get install libyaml-cpp-dev libfmt-dev"; \
	  exit 1; \
	fi
	$(BIN)/python tools/dram_reference/validate_ramulator.py $(if $(REQUESTS),--requests $(REQUESTS),)

# The SRAM area/leakage table (tlm_models/platform/area/cacti_sram.json) from CACTI 7.0 as
# the zigzag-dse wheel on PyPI ships it (built, with its technology files), run under build/.
CACTI_WHEEL := zigzag-dse==3.9.1
cacti-table: setup
	@mkdir -p build/cacti
	$(BIN)/pip download --no-deps --quiet -d build/cacti '$(CACTI_WHEEL)'
	cd build/cacti && $(PYTHON) -m zipfile -e zigzag_dse-*.whl wheel
	chmod +x build/cacti/wheel/zigzag/cacti/cacti_master/cacti
	$(BIN)/python tools/cacti_sram_table.py --cacti build/cacti/wheel/zigzag/cacti/cacti_master

clean:
	rm -rf build results .pytest_cache .mypy_cache .ruff_cache
