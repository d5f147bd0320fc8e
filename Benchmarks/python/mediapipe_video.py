#!/usr/bin/env python3
"""MediaPipe's own video pipeline, the reference side of stream_benchmark.py.

OpenCV reads the clip (cv2.VideoCapture), each frame goes BGR -> RGB into an mp.Image, and the
Tasks API FaceDetector in VIDEO running mode runs it with the frame's timestamp
(detect_for_video). Same model file as netrunner: Models/face_detection_short_range.tflite.
Prints one JSON object: frames, seconds (first read to last answer), faces per frame.

Usage: .venv-mediapipe/bin/python Benchmarks/python/mediapipe_video.py CLIP MODEL
"""
import json
import sys
import time

import cv2
import mediapipe as mp
from mediapipe.tasks.python import BaseOptions, vision

clip, model = sys.argv[1], sys.argv[2]
options = vision.FaceDetectorOptions(
    base_options=BaseOptions(model_asset_path=model),
    running_mode=vision.RunningMode.VIDEO,
    min_detection_confidence=0.5,
)
with vision.FaceDetector.create_from_options(options) as detector:
    capture = cv2.VideoCapture(clip)
    fps = capture.get(cv2.CAP_PROP_FPS) or 30
    frames = 0
    faces = []
    start = time.perf_counter()
    while True:
        ok, bgr = capture.read()
        if not ok:
            break
        rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        image = mp.Image(image_format=mp.ImageFormat.SRGB, data=rgb)
        result = detector.detect_for_video(image, int(frames * 1000 / fps))
        faces.append(len(result.detections))
        frames += 1
    seconds = time.perf_counter() - start
print(json.dumps({"frames": frames, "seconds": seconds, "faces": faces}))
