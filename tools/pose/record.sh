#!/bin/sh
# Records Python's answers (ai_edge_litert 2.3.0, Pillow, numpy) that the pose and segmentation
# tests compare with: tools/pose/record.sh [PYTHON] (default .venv-ref/bin/python, the venv
# with ai_edge_litert that scripts/record-local-reference.sh uses).
set -eu
cd "$(dirname "$0")/../.."
PY=${1:-.venv-ref/bin/python}
$PY tools/pose/reference.py pose Models/movenet_single_pose_lightning_ptq.tflite \
    Tests/Fixtures/Pose/squat.png > Tests/Fixtures/Pose/squat.python.json
for photo in Tests/Fixtures/Segmentation/bird_segmentation.png Tests/Fixtures/Pose/squat.png; do
    name=$(basename "$photo" .png)
    $PY tools/pose/reference.py segment Models/deeplabv3_mnv2_pascal_quant.tflite "$photo" /tmp/mask.$$.npy \
        > "Tests/Fixtures/Segmentation/$name.python.json"
    $PY -c "import sys, numpy; from PIL import Image; Image.fromarray(numpy.load(sys.argv[1])).save(sys.argv[2], optimize=True)" \
        /tmp/mask.$$.npy "Tests/Fixtures/Segmentation/$name.python_mask.png"
    rm -f /tmp/mask.$$.npy
done
# The evaluation's references: the sample bundles' metrics from Python's own answers
# (tools/pose/metrics.py), and those answers as results lines for NetRunner to score.
$PY tools/pose/metrics.py TestBundles/pose-sample.testbundle \
    movenet-single-pose-lightning-ptq=Models/movenet_single_pose_lightning_ptq.tflite \
    --lines Tests/Fixtures/Evaluation/pose_sample.python.jsonl > Tests/Fixtures/Evaluation/pose_sample.python.json
$PY tools/pose/metrics.py TestBundles/segmentation-sample.testbundle \
    deeplabv3-mnv2-pascal-quant=Models/deeplabv3_mnv2_pascal_quant.tflite \
    deeplabv3-mnv2-dm05-pascal-quant=Models/deeplabv3_mnv2_dm05_pascal_quant.tflite \
    --lines Tests/Fixtures/Evaluation/segmentation_sample.python.jsonl \
    > Tests/Fixtures/Evaluation/segmentation_sample.python.json
