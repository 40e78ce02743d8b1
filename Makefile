# The two commands of the README.  Both create .venv, install xslit with its
# dependencies (once: a stamp file skips the reinstall when nothing changed),
# and check the system library Open3D needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.xslit-installed

.PHONY: demo test lint system-deps

demo: $(STAMP)
	$(PY) -m xslit.demo
	rm -f outputs/metrics.json
	$(PY) samples/xslit_stereo.py --out outputs/xslit_stereo --metrics outputs/metrics.json
	$(PY) samples/pushbroom_stereo.py --out outputs/pushbroom --metrics outputs/metrics.json
	@echo "make demo: results in outputs/ (images, matches.png, points.ply, cloud.png, dsm.png, metrics.json)"

test: $(STAMP)
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .

system-deps:
	@sh tools/check_system_deps.sh

$(STAMP): pyproject.toml | system-deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,fast]'
	@touch $(STAMP)
