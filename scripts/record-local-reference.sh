#!/usr/bin/env bash
# Records the Python reference on this machine's CPU into .build/reference and prints that folder.
#
# XNNPACK's float kernels give results that differ in the last bit between CPUs (on an AVX2 AMD
# EPYC, two of the float MobileNetV2 outputs differ from the committed record), so the tests' "bit for
# bit equal to Python ai_edge_litert" compares with Python run on the same machine. The committed
# Tests/Fixtures/Reference stays the record (its inputs must equal these byte for byte: checked
# here). Python side: .venv-ref from tools/models/requirements-reference.txt (hash-pinned).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/reference
stamp="$(sha256sum tools/models/record_reference.py tools/models/photo_prep.py Models/*.tflite \
    Tests/Fixtures/Models/*.tflite tools/models/requirements-reference.txt | sha256sum | cut -c1-16)"
if [ ! -f "$out/stamp" ] || [ "$(cat "$out/stamp")" != "$stamp" ]; then
    # The venv only when there is something to record, and made again when its pins change.
    requirements="$(sha256sum tools/models/requirements-reference.txt | cut -c1-16)"
    if [ ! -x .venv-ref/bin/python ] || [ ! -f ".venv-ref/.requirements-$requirements" ]; then
        rm -rf .venv-ref
        python3 -m venv .venv-ref >&2
        .venv-ref/bin/pip install --quiet --require-hashes -r tools/models/requirements-reference.txt >&2
        touch ".venv-ref/.requirements-$requirements"
    fi
    rm -rf "$out"
    .venv-ref/bin/python tools/models/record_reference.py --out "$out" >/dev/null
    # The inputs come from the committed photos through pinned Pillow: they must be the committed ones.
    for input in "$out"/*__in*.bin "$out"/*__a.bin "$out"/*__b.bin "$out"/*__x.bin; do
        [ -e "$input" ] || continue
        cmp -s "$input" "Tests/Fixtures/Reference/$(basename "$input")" || {
            echo "record-local-reference: $input differs from the committed input" >&2
            exit 1
        }
    done
    echo "$stamp" > "$out/stamp"
fi
echo "$PWD/$out"
