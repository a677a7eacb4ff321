#!/bin/sh
# setup-python.sh — the Python package and its test environment: a venv at .venv-python
# (python3 on PATH) with numpy, pytest and Ray Data from PyPI (pinned), then
# `pip install ./python`, which builds the engine with the project's CMake through
# scikit-build-core (its build directory python/build/ is kept, so a second run only
# relinks what changed). Run by scripts/setup.sh; SOTTO_SKIP_PYTHON=1 skips it there,
# SOTTO_SKIP_RAY=1 leaves Ray out (the Ray test then fails, saying so). Idempotent.
set -eu
cd "$(dirname "$0")/.."
venv=.venv-python
if [ ! -x "$venv/bin/python" ]; then
    echo "setup: creating $venv"
    python3 -m venv "$venv"
fi
pip="$venv/bin/python -m pip --disable-pip-version-check -q"
deps="numpy==2.4.6 pytest==9.2.0"
if [ "${SOTTO_SKIP_RAY:-0}" != 1 ]; then deps="$deps ray[data]==2.60.0"; fi
# shellcheck disable=SC2086
$pip install $deps
echo "setup: pip install ./python"
# warnings are errors here, as in the project's own build (a user's pip install keeps them warnings)
$pip install --config-settings=cmake.define.SOTTO_WERROR=ON ./python
