#!/usr/bin/env bash
# Records the evaluation references in Tests/Fixtures/Evaluation with pinned Python packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.venv-evaluation
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q numpy==2.4.6 pycocotools==2.0.10 scikit-learn==1.5.2
"$venv/bin/python" tools/evaluation/record_map_reference.py Tests/Fixtures/Evaluation/coco_map_case.json
