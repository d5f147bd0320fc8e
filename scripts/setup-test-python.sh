#!/usr/bin/env bash
# The Python the server tests drive the server with (tools/serve/requirements.txt: the real
# Triton client from PyPI, Pillow, numpy), in .venv-test, every package pinned. Idempotent:
# does nothing when the venv already has exactly these versions.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-test
REQUIREMENTS=tools/serve/requirements.txt
STAMP="$VENV/.requirements-$(sha256sum "$REQUIREMENTS" | cut -c1-16)"
if [ -f "$STAMP" ]; then exit 0; fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --requirement "$REQUIREMENTS"
# Checked: the client imports and is the pinned version.
"$VENV/bin/python" - <<'PY'
import tritonclient.http, PIL, numpy
from importlib.metadata import version
assert version("tritonclient") == "2.73.0", version("tritonclient")
PY
rm -f "$VENV"/.requirements-*
touch "$STAMP"
echo "setup-test-python: $VENV ready (tritonclient $("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("tritonclient"))'))"
