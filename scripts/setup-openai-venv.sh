#!/bin/sh
# The official `openai` Python client, for the `sotto serve` tests (tests/serve/test_openai.py,
# test_realtime.py) and bench/serve.py, and the `websockets` package (the client's realtime
# connection runs on it; test_realtime.py and fuzz_serve.py also speak WebSocket with it): a
# virtual environment of its own at .venv-openai (git-ignored), with the PyPI packages pinned. scripts/setup.sh runs this; idempotent (nothing to do once installed).
set -eu
cd "$(dirname "$0")/.."
VERSION=3.57.0
WEBSOCKETS=17.4
venv=.venv-openai
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import openai, websockets, sys; sys.exit(openai.__version__ != '$VERSION' or websockets.__version__ != '$WEBSOCKETS')" 2>/dev/null; then
    exit 0
fi
echo "setup: installing the openai Python client $VERSION and websockets $WEBSOCKETS into $venv"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "openai==$VERSION" "websockets==$WEBSOCKETS"
