#!/usr/bin/env bash
# Creates .venv-bench (git-ignored) with the reference side of the benchmarks: Python
# ai-edge-litert 2.3.0 + numpy + pillow, hash-pinned in tools/models/requirements-reference.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-bench"
req="$root/tools/models/requirements-reference.txt"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$req"
echo "$want" > "$stamp"
echo "Reference benchmark environment ready: $venv"
