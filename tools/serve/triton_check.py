#!/usr/bin/env python3
"""Drives `netrunner serve` with the real Triton client (tritonclient[http] from PyPI), as a
Triton or KServe user would, and prints what it got as one JSON object for the Swift test to
assert on.

The image is preprocessed here with Pillow the way the TFLite example and our pipeline do it
(centre square crop, bilinear resize to 224, RGB uint8), so the server's raw answer must equal
what `/v1/models/{id}/classify` answers for the same photo.

Usage: .venv-test/bin/python tools/serve/triton_check.py URL MODEL PHOTO
"""
import json
import sys

import numpy as np
import tritonclient.http as http
from PIL import Image


def tensor(photo, size):
    image = Image.open(photo).convert("RGB")
    side = min(image.size)
    left = (image.size[0] - side) // 2
    top = (image.size[1] - side) // 2
    image = image.crop((left, top, left + side, top + side)).resize((size, size), Image.BILINEAR)
    return np.asarray(image, dtype=np.uint8)[np.newaxis, ...]


def main():
    url, model, photo = sys.argv[1], sys.argv[2], sys.argv[3]
    client = http.InferenceServerClient(url=url.replace("http://", ""))
    report = {
        "live": client.is_server_live(),
        "ready": client.is_server_ready(),
        "model_ready": client.is_model_ready(model),
        "server": client.get_server_metadata(),
    }
    metadata = client.get_model_metadata(model)
    report["metadata"] = metadata
    # Triton's model configuration and model repository extensions: each as it came, or the
    # client's error (a missing route reads "[404] client received an empty response").
    for key, call in (
        ("config", lambda: client.get_model_config(model)),
        ("config_version_1", lambda: client.get_model_config(model, model_version="1")),
        ("index", client.get_model_repository_index),
    ):
        try:
            report[key] = call()
        except http.InferenceServerException as error:
            report[key] = {"client_error": str(error)}
    input_meta = metadata["inputs"][0]
    output_name = metadata["outputs"][0]["name"]
    data = tensor(photo, input_meta["shape"][1])
    for binary in (True, False):
        tag = "binary" if binary else "json"
        request = http.InferInput(input_meta["name"], list(data.shape), input_meta["datatype"])
        request.set_data_from_numpy(data, binary_data=binary)
        outputs = [
            http.InferRequestedOutput(output_name, binary_data=binary, class_count=3),
        ]
        result = client.infer(model, [request], outputs=outputs)
        report[f"classification_{tag}"] = [
            value.decode() if isinstance(value, bytes) else value for value in result.as_numpy(output_name).ravel()
        ]
        raw = client.infer(model, [request], outputs=[http.InferRequestedOutput(output_name, binary_data=binary)])
        scores = raw.as_numpy(output_name)
        report[f"raw_{tag}"] = {"shape": list(scores.shape), "dtype": str(scores.dtype),
                                "argmax": int(scores.ravel().argmax()), "max": int(scores.ravel().max())}
    try:
        client.get_model_metadata("no-such-model")
        report["unknown_model"] = "no error"
    except http.InferenceServerException as error:
        report["unknown_model"] = str(error)
    try:
        client.get_model_config("no-such-model")
        report["unknown_model_config"] = "no error"
    except http.InferenceServerException as error:
        report["unknown_model_config"] = str(error)
    # Triton's statistics extension, after the four inferences above.
    report["stats"] = client.get_inference_statistics(model)
    report["stats_all"] = client.get_inference_statistics()
    # Triton's model control (explicit mode): unload, then load again.
    control = {}
    client.unload_model(model)
    control["ready_after_unload"] = client.is_model_ready(model)
    control["index_after_unload"] = [entry for entry in client.get_model_repository_index() if entry["name"] == model]
    try:
        client.infer(model, [request])
        control["infer_after_unload"] = "no error"
    except http.InferenceServerException as error:
        control["infer_after_unload"] = str(error)
    client.load_model(model)
    control["ready_after_load"] = client.is_model_ready(model)
    control["infer_after_load"] = client.infer(model, [request]).as_numpy(output_name).shape[-1]
    for call in ("load_model", "unload_model", "get_inference_statistics"):
        try:
            getattr(client, call)("no-such-model")
            control[f"unknown_{call}"] = "no error"
        except http.InferenceServerException as error:
            control[f"unknown_{call}"] = str(error)
    report["control"] = control
    print(json.dumps(report))


if __name__ == "__main__":
    main()
