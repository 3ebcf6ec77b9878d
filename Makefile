# NotesKit — two commands on a fresh Debian machine:
#   make demo   build everything, run examples/quickstart.py on the default store and the
#               command-line tour (examples/cli_tour.sh) on a throwaway store
#   make test   build everything and run every test (swift test, the pytest acceptance suite with
#               the wheel, command-line and notebook tests, and mypy --strict)
SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -eu -o pipefail -c

# Debian packages the build, the tests and the demo need (installed when missing).
DEBS := pkg-config libsqlite3-dev libpython3-dev python3-venv python3-gi gir1.2-pango-1.0 \
        libpango1.0-dev libcairo2-dev fonts-wqy-microhei fonts-dejavu-core fontconfig \
        postgresql libpq-dev
# (postgresql: the throwaway cluster the tests and `make demo ARGS=--postgres` start, initdb and
# pg_ctl; libpq-dev brings libpq5, which the library loads when a postgresql:// store is opened.)
# The venv is made from Debian's interpreter with its site packages, so PyGObject (the Pango
# oracle of the layout tests) is importable next to noteskit.
SYSTEM_PYTHON := /usr/bin/python3
VENV := .venv
PY := $(VENV)/bin/python
LIB := .build/release/libNotesCAPI.so
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps lib venv demo test swift-test py-test typecheck bench stress clean

all: lib

deps:
	@missing=$$(for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done | tr '\n' ' ')
	if [ -n "$$missing" ]; then
	  echo "installing Debian packages: $$missing"
	  $(SUDO) apt-get update -qq
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null
	  fc-cache -f >/dev/null
	fi

lib: deps
	swift build -c release --product NotesCAPI -Xswiftc -static-stdlib

PYSRC := $(shell find bindings/python/src -name '*.py' -o -name py.typed) bindings/python/setup.py \
         bindings/python/pyproject.toml

# The user's install path, not an editable one: pip builds the wheel through the package's build
# hook (bindings/python/setup.py), which runs the same release build as `make lib` (SwiftPM finds
# it up to date) and puts libNotesCAPI.so inside the installed package. Redone when the library or
# the package's sources change.
$(LIB): ;
$(VENV)/.installed: $(LIB) $(PYSRC)
	[ -x $(PY) ] || { $(SYSTEM_PYTHON) -m venv --system-site-packages $(VENV) && $(PY) -m pip install -q --upgrade pip; }
	$(PY) -m pip install -q './bindings/python[test]'
	touch $@

venv: deps lib $(VENV)/.installed

demo: lib venv
	$(PY) examples/quickstart.py $(ARGS)
	examples/cli_tour.sh $(VENV)/bin/noteskit

swift-test: lib
	swift test

py-test: lib venv
	$(PY) -m pytest -q bindings/python/tests

# The package and the examples, as a user's type checker sees them.
typecheck: venv
	$(PY) -m mypy --strict bindings/python/src/noteskit examples

test: swift-test py-test typecheck

# The benchmarks' peers (ADBC's SQLite driver, psycopg 3) come with the package's [bench] extra.
bench: lib venv
	$(PY) -m pip install -q './bindings/python[bench]'
	$(PY) benchmarks/store_bench.py
	$(PY) benchmarks/layout_bench.py
	$(PY) benchmarks/chat_bench.py
	$(PY) benchmarks/exchange_bench.py
	$(PY) benchmarks/search_bench.py
	$(PY) benchmarks/bulk_write_bench.py
	$(PY) benchmarks/transport_bench.py
	$(PY) benchmarks/postgres_bench.py
	$(PY) benchmarks/footprint_bench.py

# The long reliability runs (threads, processes, kill -9, the hostile-ABI sweep, 1 000 000 fuzz inputs,
# a 1 000 000-call leak session and valgrind, broken files); each prints its figures, then a table.
# `make stress ARGS=--quick` is a smoke run; `make stress ARGS="fuzz leaks"` runs some checks only.
stress: lib venv
	$(PY) -m pip install -q -e 'bindings/python[stress]'
	command -v valgrind >/dev/null || { $(SUDO) apt-get install -y -qq valgrind >/dev/null; }
	$(PY) -m stress $(ARGS)

clean:
	rm -rf .build $(VENV)
