#!/bin/sh
# run.sh — runs pytest on the package's tests in the venv scripts/setup-python.sh made.
# usage: run.sh REPO_ROOT TEST_FILE...   (what ctest python_package and python_ray run)
root=$1
shift
py=$root/.venv-python/bin/python
if [ ! -x "$py" ]; then
    echo "python tests: no $py: run scripts/setup-python.sh (scripts/setup.sh runs it unless SOTTO_SKIP_PYTHON=1)" >&2
    exit 1
fi
exec "$py" -m pytest -q -p no:cacheprovider "$@"
