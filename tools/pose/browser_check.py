#!/usr/bin/env python3
"""Drives serve's web page with a pose estimator and a segmenter in a real browser: Debian's
headless Chromium through chromedriver (selenium), its fake camera fed a Y4M clip that ffmpeg
makes from Coral's squat photo (a person, squatting).

1. The live camera with MoveNet: the keypoints the page lists, and where it drew on its overlay
   (the box of the drawn pixels, in the video's pixels); a screenshot (camera-pose.png). Then
   with DeepLab: the legend and the pixels the mask covers (camera-segment.png).
2. A photo picked with DeepLab: the legend and the share of the overlay the mask covers
   (photo-segment.png).
3. The album (the server's --albums folder) with DeepLab, then MoveNet: the captions, one photo
   opened with its mask, then with its skeleton (album-segment.png, album-pose.png).
4. Coral's embedding extractor on two photos picked one after the other (a cat, another cat):
   the size the panel gives, and the cosine similarity of the second with the first
   (photo-embedding.png).
The figures are printed as one JSON object for the Swift test to assert on.

Usage: .venv-test/bin/python tools/pose/browser_check.py URL OUT
"""
import importlib.util
import json
import os
import subprocess
import sys
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The browser and the polling helpers are serve's browser check's (loaded by path: both files
# are called browser_check.py).
_spec = importlib.util.spec_from_file_location(
    "serve_browser_check", os.path.join(ROOT, "tools", "serve", "browser_check.py"))
_serve = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_serve)
answers, wait, settled = _serve.answers, _serve.wait, _serve.settled


def browser(clip):
    return _serve.browser(clip, height=1100)
SQUAT = os.path.join(ROOT, "Tests/Fixtures/Pose/squat.png")
MOVENET = "movenet-single-pose-lightning-ptq"
DEEPLAB = "deeplabv3-mnv2-pascal-quant"
EMBEDDER = "mobilenet-v1-1.0-224-quant-embedding-extractor"
CATS = [os.path.join(ROOT, "Tests/Fixtures/Embedding/imprinting", name)
        for name in ["test/cat_test_0.png", "train/cat/cat_train_0.png"]]

# The overlay's drawn pixels: how many (alpha > 0) and their box, in the canvas's pixels.
DRAWN = """
const canvas = document.getElementById(arguments[0]);
const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
let count = 0, left = canvas.width, top = canvas.height, right = -1, bottom = -1;
for (let y = 0; y < canvas.height; y++) for (let x = 0; x < canvas.width; x++) {
  if (data[(y * canvas.width + x) * 4 + 3] === 0) continue;
  count++; left = Math.min(left, x); right = Math.max(right, x); top = Math.min(top, y); bottom = Math.max(bottom, y);
}
return {width: canvas.width, height: canvas.height, count, box: count ? [left, top, right, bottom] : null};
"""


def make_clip(out):
    """Three seconds of the squat photo at its own size (500 x 610), 10 frames/s, as Y4M."""
    clip = os.path.join(out, "squat.y4m")
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-loop", "1", "-t", "3", "-i", SQUAT,
                    "-vf", "fps=10,format=yuv420p", clip], check=True)
    return clip


def main():
    url, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    clip = make_clip(out)
    report = {}
    driver = browser(clip)
    try:
        driver.get(url)
        wait(lambda: driver.find_elements(By.CSS_SELECTOR, f"#model option[value='{MOVENET}']"), 10)
        select = Select(driver.find_element(By.ID, "model"))
        select.select_by_value(MOVENET)
        driver.find_element(By.ID, "camera").click()
        report["camera_keypoints"] = wait(lambda: (lambda shown: shown if len(shown) >= 10 else None)(
            answers(driver)), 30) or answers(driver)
        # Two answers more, so the one drawn is a whole frame's, then pause and measure it.
        count = int(driver.find_element(By.ID, "t-count").text)
        wait(lambda: int(driver.find_element(By.ID, "t-count").text) >= count + 2, 15)
        driver.find_element(By.ID, "pause").click()
        time.sleep(0.5)
        report["camera_drawn"] = driver.execute_script(DRAWN, "overlay")
        report["camera_video"] = driver.execute_script(
            "const v = document.getElementById('video'); return [v.videoWidth, v.videoHeight]")
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(os.path.join(out, "camera-pose.png"))

        # The same camera with DeepLab: the legend, then the mask over the frame.
        driver.find_element(By.ID, "pause").click()  # resume
        select.select_by_value(DEEPLAB)
        report["camera_legend"] = wait(lambda: answers(driver), 60)
        driver.find_element(By.ID, "pause").click()
        settled(lambda: driver.find_element(By.ID, "t-count").text, 1.0, 15)
        report["camera_mask_drawn"] = wait(lambda: (lambda d: d if d["count"] else None)(
            driver.execute_script(DRAWN, "overlay")), 10)
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(os.path.join(out, "camera-segment.png"))
        driver.find_element(By.ID, "camera").click()  # stop

        select.select_by_value(DEEPLAB)
        driver.find_element(By.ID, "file").send_keys(SQUAT)
        report["photo_legend"] = wait(lambda: answers(driver), 30)
        report["photo_shares"] = driver.execute_script(
            "return [...document.querySelectorAll('#answers .row .score')].map((s) => s.textContent)")
        # The mask is drawn once its PNG is decoded.
        report["photo_drawn"] = wait(lambda: (lambda d: d if d["count"] else None)(
            driver.execute_script(DRAWN, "overlay")), 10) or driver.execute_script(DRAWN, "overlay")
        driver.save_screenshot(os.path.join(out, "photo-segment.png"))

        driver.find_element(By.ID, "tab-album").click()
        wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#album option"), 5)
        for model, name in [(DEEPLAB, "segment"), (MOVENET, "pose")]:
            select.select_by_value(model)
            driver.find_element(By.ID, "album-run").click()
            # A deadline, not a wait: a CI run under load once had MoveNet's run at 1 of 2 photos
            # after 60 s (DeepLab's inference then took 312 ms a photo, three times its usual).
            wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#album-grid .tile")
                 and "of" in driver.find_element(By.ID, "album-status").text
                 and not driver.find_element(By.ID, "album-run").get_property("disabled"), 180)
            report[f"album_{name}_status"] = driver.find_element(By.ID, "album-status").text
            report[f"album_{name}_captions"] = driver.execute_script(
                "return [...document.querySelectorAll('#album-grid .tile')].map((t) => "
                "[t.querySelector('.name').textContent, t.lastChild.textContent])")
            tiles = driver.find_elements(By.CSS_SELECTOR, "#album-grid .tile")
            squat = [tile for tile in tiles if tile.find_element(By.CLASS_NAME, "name").text == "squat.png"]
            if squat:
                squat[0].click()
                report[f"album_{name}_answers"] = wait(lambda: answers(driver, "album-answers"), 10)
                report[f"album_{name}_drawn"] = wait(lambda: (lambda d: d if d["count"] else None)(
                    driver.execute_script(DRAWN, "album-overlay")), 10)
                driver.save_screenshot(os.path.join(out, f"album-{name}.png"))
                driver.find_element(By.ID, "album-close").click()
        driver.find_element(By.ID, "tab-live").click()
        select.select_by_value(EMBEDDER)
        size = "const s = document.querySelector('#answers .embedding-size'); return s && s.textContent"
        cosine = "const s = document.querySelector('#answers .row .score'); return s && s.textContent"
        # The first cat (the page may first show the photo it had, embedded), then the second:
        # the cosine shown changes to the second's with the first.
        driver.find_element(By.ID, "file").send_keys(CATS[0])
        wait(lambda: driver.execute_script(size), 30)
        settled(lambda: (driver.execute_script(size), driver.execute_script(cosine)), 1.0, 15)
        before = driver.execute_script(cosine)
        driver.find_element(By.ID, "file").send_keys(CATS[1])
        report["embedding_cosine"] = wait(lambda: (lambda now: now if now and now != before else None)(
            driver.execute_script(cosine)), 30)
        report["embedding_size"] = driver.execute_script(size)
        driver.save_screenshot(os.path.join(out, "photo-embedding.png"))
        report["console_errors"] = [entry["message"] for entry in driver.get_log("browser")
                                    if entry.get("level") == "SEVERE"]
    finally:
        driver.quit()
        with open(os.path.join(out, "report.json"), "w") as file:
            json.dump(report, file, indent=1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
