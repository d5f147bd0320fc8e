#!/usr/bin/env bash
# Records the evaluation references in Tests/Fixtures/Evaluation with pinned Python packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.venv-evaluation
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q numpy==2.4.6 pycocotools==2.0.10 scikit-learn==1.5.2
# The Python reference runtime (ai-edge-litert 2.3.0, numpy 2.4.6, pillow 13.0.0 and their
# dependencies), hash-pinned exactly as for tools/models/record_reference.py. Its numpy pin is
# the same as above, so both sets share one environment.
"$venv/bin/pip" install -q --require-hashes -r tools/models/requirements-reference.txt
"$venv/bin/python" tools/evaluation/record_map_reference.py Tests/Fixtures/Evaluation/coco_map_case.json
"$venv/bin/python" tools/evaluation/record_sample_bundles.py Tests/Fixtures/Evaluation/sample_bundles_reference.json
