#!/usr/bin/env bash
# The Python the experiment statistics' tests check against (tools/experiments/requirements.txt:
# GrowthBook's stats engine, gbstats 0.8.0, and its dependencies, every one pinned by version and
# SHA-256), in .venv-stats. Idempotent: does nothing when the venv already has exactly these files.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-stats
REQUIREMENTS=tools/experiments/requirements.txt
STAMP="$VENV/.requirements-$(sha256sum "$REQUIREMENTS" | cut -c1-16)"
if [ -f "$STAMP" ]; then exit 0; fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --require-hashes --requirement "$REQUIREMENTS"
# Checked: the engine imports and is the pinned version.
"$VENV/bin/python" - <<'PY'
from gbstats.bayesian.tests import EffectBayesianABTest
from gbstats.frequentist.tests import SequentialTwoSidedTTest
from importlib.metadata import version
assert version("gbstats") == "0.8.0", version("gbstats")
PY
rm -f "$VENV"/.requirements-*
touch "$STAMP"
echo "setup-stats-python: $VENV ready (gbstats $("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("gbstats"))'))"
