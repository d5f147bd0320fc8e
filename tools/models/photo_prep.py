"""Shared image preprocessing for the MobileNetV2 test models (Pillow + numpy only).

The contract (also written to Models/SOURCES.md):
  1. decode, convert to RGB (no EXIF rotation is applied; the committed photos need none),
  2. centre crop to a square whose side is min(width, height) (offsets rounded down),
  3. resize to 224x224 with Pillow's BILINEAR filter (Pillow's resize is area-aware when
     shrinking, i.e. it antialiases),
  4. float32 model: value / 255 as float32 (RGB in [0, 1], NHWC [1, 224, 224, 3]);
     uint8 model: the raw bytes (input scale 1/255, zero point 0);
     int8 model: round(value_in_0_1 / scale) + zero_point, clipped to [-128, 127].
ImageNet mean/std normalisation happens INSIDE the models.
"""
from __future__ import annotations

import numpy as np
from PIL import Image

SIZE = 224


def centre_square(img: Image.Image) -> Image.Image:
    """Largest centred square crop."""
    w, h = img.size
    side = min(w, h)
    left, top = (w - side) // 2, (h - side) // 2
    return img.crop((left, top, left + side, top + side))


def load_rgb_224(path: str) -> np.ndarray:
    """Photo -> uint8 array [224, 224, 3] (centre crop, bilinear resize)."""
    with Image.open(path) as im:
        img = im.convert("RGB")
    img = centre_square(img).resize((SIZE, SIZE), Image.BILINEAR)
    return np.asarray(img, dtype=np.uint8).copy()


def to_float01(rgb: np.ndarray) -> np.ndarray:
    """uint8 [H, W, 3] -> float32 [1, H, W, 3] in [0, 1] (Float(byte) / 255)."""
    return (rgb.astype(np.float32) / np.float32(255.0))[None]


def quantize(x01: np.ndarray, scale: float, zero_point: int, dtype) -> np.ndarray:
    """float values -> integer tensor with the given affine quantization (round, clip)."""
    info = np.iinfo(dtype)
    q = np.round(x01.astype(np.float64) / scale) + zero_point
    return np.clip(q, info.min, info.max).astype(dtype)


def calibration_views(rgb_full: Image.Image) -> list[np.ndarray]:
    """Augmented 224x224 uint8 views of one calibration photo: centre square, the two other
    square crops along the long side, an 80 % centre zoom, and the horizontal flip of each."""
    w, h = rgb_full.size
    side = min(w, h)
    boxes = [
        ((w - side) // 2, (h - side) // 2),
        (0, 0),
        (w - side, h - side),
    ]
    crops = [rgb_full.crop((x, y, x + side, y + side)) for x, y in boxes]
    z = int(side * 0.8)
    zx, zy = (w - z) // 2, (h - z) // 2
    crops.append(rgb_full.crop((zx, zy, zx + z, zy + z)))
    views = []
    for c in crops:
        c = c.resize((SIZE, SIZE), Image.BILINEAR)
        views.append(np.asarray(c, dtype=np.uint8).copy())
        views.append(np.asarray(c.transpose(Image.FLIP_LEFT_RIGHT), dtype=np.uint8).copy())
    return views
