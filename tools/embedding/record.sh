#!/bin/sh
# Records Python's answers (ai_edge_litert 2.3.0, Pillow, numpy) that the embedding tests
# compare with: tools/embedding/record.sh [PYTHON] [NETRUNNER] (defaults .venv-ref/bin/python,
# the venv with ai_edge_litert that scripts/record-local-reference.sh makes, and
# .build/debug/netrunner).
#   imprinting.python.json: the extractor's raw output for each of Coral's imprinting photos.
#   penultimate.python.json: MobileNet V2 (uint8)'s penultimate layer (1280 values) for the photos,
#   read in Python from the whole model with every tensor kept (not from NetRunner's cut model).
#   recall.python.json: see below.
#   imprinted.python.json: the classifier `netrunner imprint` makes from the training photos,
#   its SHA-256 and Python's scores for the test photos, run on exactly those bytes.
set -eu
cd "$(dirname "$0")/../.."
PY=${1:-.venv-ref/bin/python}
NETRUNNER=${2:-.build/debug/netrunner}
EXTRACTOR=Models/mobilenet_v1_1.0_224_quant_embedding_extractor.tflite
PHOTOS=Tests/Fixtures/Embedding/imprinting
$PY tools/embedding/reference.py embed "$EXTRACTOR" $(find "$PHOTOS" -name '*.png' | sort) \
    > Tests/Fixtures/Embedding/imprinting.python.json
$PY tools/embedding/reference.py penultimate Models/mobilenet_v2_1.0_224_uint8.tflite \
    $(find "$PHOTOS" -name '*.png' | sort) > Tests/Fixtures/Embedding/penultimate.python.json
# recall.python.json: Recall@1, 3 and 5 and each photo's nearest photos, from the extractor's
# embeddings of the photos evaluation-classes.json names (EmbeddingCommandTests.evaluate).
CLASSES=Tests/Fixtures/Embedding/evaluation-classes.json
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$PY tools/embedding/reference.py embed "$EXTRACTOR" $($PY -c "import json, sys; print(' '.join(json.load(open(sys.argv[1]))))" "$CLASSES") \
    > "$work/evaluation.json"
$PY tools/embedding/recall.py "$work/evaluation.json" "$CLASSES" 1 3 5 > Tests/Fixtures/Embedding/recall.python.json
"$NETRUNNER" imprint "$PHOTOS/train" --model "$EXTRACTOR" --output "$work/pets.tiobundle" >&2
{
    printf '{"sha256": "%s",\n "answers": ' "$(sha256sum "$work/pets.tiobundle/pets.tflite" | cut -c1-64)"
    $PY tools/embedding/reference.py classify "$work/pets.tiobundle/pets.tflite" $(find "$PHOTOS/test" -name '*.png' | sort)
    printf '}\n'
} > Tests/Fixtures/Embedding/imprinted.python.json
