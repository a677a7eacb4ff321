#!/bin/sh
# The official `openai` Python client, for the `sotto serve` tests (tests/serve/test_openai.py)
# and bench/serve.py: a virtual environment of its own at .venv-openai (git-ignored), with the
# PyPI package pinned. scripts/setup.sh runs this; idempotent (nothing to do once installed).
set -eu
cd "$(dirname "$0")/.."
VERSION=3.57.0
venv=.venv-openai
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import openai, sys; sys.exit(openai.__version__ != '$VERSION')" 2>/dev/null; then
    exit 0
fi
echo "setup: installing the openai Python client $VERSION into $venv"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "openai==$VERSION"
