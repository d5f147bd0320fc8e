#!/usr/bin/env python3
"""Drives serve's web page in a real browser (Debian's headless Chromium through chromedriver,
selenium) through two things a new user met that the main check (browser_check.py) does not:

1. Models still loading when the page opens: the page lists each model as loading, the header
   says so, the camera (Chromium's fake one) waits; the script then writes OUT/loading-seen,
   the test starts the server's engine, and the page must pick up the models once they are
   ready (the first ready one chosen, the camera live on it), the one that fails shown as
   failed with its reason, and stop asking /v1/models (models-loading.png, models-ready.png).
2. Photos the browser cannot draw: a HEIC picked with the file input (an iPhone's photo,
   turned by its irot) must show as the server renders it (POST /v1/render), not black, with
   the skeleton over it (heic-1280.png, heic-390.png at a phone's width); a JPEG is still drawn
   by the browser itself; a TIFF of the squat photo (written here with Pillow) shows its
   skeleton on the person (tiff-pose.png); the album's HEIC, opened, shows as the server renders
   it (album-heic-1280.png, album-heic-390.png).

The figures are printed as one JSON object for the Swift test to assert on.

Usage: .venv-test/bin/python tools/serve/page_check.py URL OUT ALBUM_SIZE
"""
import json
import os
import sys
import time

from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEIC = os.path.join(ROOT, "Tests/Fixtures/Formats/heic_irot.heic")
COFFEE = os.path.join(ROOT, "Tests/Fixtures/Photos/test/coffee.jpg")
SQUAT = os.path.join(ROOT, "Tests/Fixtures/Pose/squat.png")
CLASSIFIER = "mobilenet-v2-1.0-224-uint8"
MOVENET = "movenet-single-pose-lightning-ptq"

# An <img>'s pixels, drawn on a canvas (its blob or same-origin URL does not taint it): its
# natural size, its mean brightness (0-255) and the share of pixels that are not near black.
PIXELS = """
const image = document.getElementById(arguments[0]);
const width = image.naturalWidth, height = image.naturalHeight;
if (!image.complete || !width || !height) return {width, height, mean: 0, lit: 0, shownBy: image.dataset.shownBy || ""};
const canvas = document.createElement('canvas');
canvas.width = width; canvas.height = height;
const context = canvas.getContext('2d');
context.drawImage(image, 0, 0);
const data = context.getImageData(0, 0, width, height).data;
let sum = 0, lit = 0;
for (let i = 0; i < data.length; i += 4) {
  const r = data[i], g = data[i + 1], b = data[i + 2];
  sum += (r + g + b) / 3;
  if (Math.max(r, g, b) > 40) lit++;
}
const count = width * height;
return {width, height, mean: sum / count, lit: lit / count, shownBy: image.dataset.shownBy || ""};
"""

# The overlay's drawn pixels (alpha > 0), as tools/pose/browser_check.py counts them.
DRAWN = """
const canvas = document.getElementById(arguments[0]);
const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
let count = 0;
for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) count++;
return {width: canvas.width, height: canvas.height, count};
"""

OPTIONS = """
return [...document.querySelectorAll('#model option')].map((o) => ({id: o.value, text: o.textContent,
  disabled: o.disabled, selected: o.selected, title: o.title}));
"""

MODEL_REQUESTS = """
return performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname === '/v1/models').length;
"""


def browser():
    """Headless Chromium with its fake camera (a generated picture), 1280 x 1000."""
    options = Options()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream", "--window-size=1280,1000"]:
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


# Deadlines, not delays: each wait ends as soon as its condition holds. They are four times what
# an idle machine needs, for the suite's heaviest minutes on two cores (a 60 s album run was cut
# short there once).
SLACK = 4


def wait(condition, seconds):
    """Polls until the condition holds or the time (times SLACK) is up; returns its last value."""
    deadline, value = time.time() + seconds * SLACK, None
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    return value


def answers(driver, panel="answers"):
    return driver.execute_script(
        f"return [...document.querySelectorAll('#{panel} .row')].map((row) => row.firstChild.firstChild.textContent)")


def text(driver, element):
    return driver.find_element(By.ID, element).text


def at_width(driver, width, height, name, out, element=None):
    """A screenshot at a window width (the element scrolled into view), then back to 1280."""
    driver.set_window_size(width, height)
    if element:
        driver.execute_script(f"document.getElementById('{element}').scrollIntoView({{block: 'start'}})")
    time.sleep(0.3)  # a resize lays the page out again before the next frame is painted
    overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    driver.save_screenshot(os.path.join(out, name))
    driver.set_window_size(1280, 1000)
    return overflow


def pick(driver, path, model):
    """Picks a photo with the file input, with `model` chosen, and waits for its answer."""
    Select(driver.find_element(By.ID, "model")).select_by_value(model)
    driver.execute_script("document.getElementById('answers').replaceChildren();"
                          "document.getElementById('photo').dataset.shownBy = ''")
    driver.find_element(By.ID, "file").send_keys(path)
    wait(lambda: answers(driver) and driver.execute_script(
        "return document.getElementById('photo').dataset.shownBy"), 30)
    return {"answers": answers(driver), "photo": driver.execute_script(PIXELS, "photo"),
            "drawn": driver.execute_script(DRAWN, "overlay")}


def main():
    url, out = sys.argv[1], sys.argv[2]
    album_size = int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    marker = os.path.join(out, "loading-seen")
    if os.path.exists(marker):
        os.remove(marker)
    report = {}
    driver = browser()
    try:
        # 1. Every model loading: listed, disabled, said; the camera started waits for one.
        driver.get(url)
        wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#model option"), 15)
        # Every /v1/models request stays counted, however many others the page makes.
        driver.execute_script("performance.setResourceTimingBufferSize(100000)")
        report["loading_options"] = driver.execute_script(OPTIONS)
        report["loading_status"] = text(driver, "status")
        report["loading_note"] = text(driver, "models-note")
        driver.find_element(By.ID, "camera").click()
        # The camera runs (its video shown), with no model to send its frames to yet.
        report["loading_camera_running"] = bool(wait(lambda: driver.execute_script(
            "const v = document.getElementById('video'); return !v.hidden && v.videoWidth > 0"), 15))
        report["loading_camera_status"] = text(driver, "status")
        driver.save_screenshot(os.path.join(out, "models-loading.png"))
        with open(marker, "w") as file:
            file.write("the page shows the models loading\n")

        # The engine starts now: the page follows the models until none is loading.
        settled = wait(lambda: (lambda options: options if options and not any(
            "loading" in o["text"] for o in options) else None)(driver.execute_script(OPTIONS)), 240)
        report["ready_options"] = settled or driver.execute_script(OPTIONS)
        report["ready_note"] = text(driver, "models-note")
        report["ready_live_status"] = wait(lambda: (lambda s: s if s.startswith("live:") else None)(
            text(driver, "status")), 30) or text(driver, "status")
        report["ready_frames"] = wait(lambda: int(text(driver, "t-count")) or None, 30) or 0
        report["ready_answers"] = answers(driver)
        driver.save_screenshot(os.path.join(out, "models-ready.png"))
        driver.find_element(By.ID, "camera").click()  # stop
        report["model_requests_when_ready"] = driver.execute_script(MODEL_REQUESTS)

        # 2. A HEIC picked: the server's rendering, upright, not black, the skeleton over it.
        heic = pick(driver, HEIC, MOVENET)
        report["heic"] = heic
        report["heic_1280_overflow"] = at_width(driver, 1280, 1000, "heic-1280.png", out)
        report["heic_390_overflow"] = at_width(driver, 390, 844, "heic-390.png", out)
        # A JPEG is still drawn by the browser itself.
        report["jpeg"] = pick(driver, COFFEE, CLASSIFIER)
        # A TIFF of the squat photo (500 x 610): its skeleton on the person.
        tiff = os.path.join(out, "squat.tif")
        Image.open(SQUAT).convert("RGB").save(tiff, compression="tiff_lzw")
        report["tiff"] = pick(driver, tiff, MOVENET)
        report["tiff_keypoints"] = len(report["tiff"]["answers"])
        driver.save_screenshot(os.path.join(out, "tiff-pose.png"))

        # The album: its HEIC opened shows as the server renders it.
        driver.find_element(By.ID, "tab-album").click()
        wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#album option"), 10)
        driver.find_element(By.ID, "album-run").click()
        wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#album-grid .tile")) == album_size
             and not driver.find_element(By.ID, "album-run").get_property("disabled"), 60)
        wait(lambda: driver.execute_script(
            "return [...document.querySelectorAll('#album-grid img')].every((i) => i.complete && i.naturalWidth)"), 15)
        report["album_thumbnails"] = driver.execute_script(
            "return [...document.querySelectorAll('#album-grid .tile')].map((t) => [t.querySelector('.name')"
            ".textContent, (t.querySelector('img') || {}).naturalWidth || 0])")
        for name in ["heic_irot.heic", "coffee.jpg", "tiff_orientation6.tif"]:
            driver.execute_script("const p = document.getElementById('album-photo'); p.dataset.shownBy = '';"
                                  "document.getElementById('album-answers').replaceChildren()")
            tiles = [tile for tile in driver.find_elements(By.CSS_SELECTOR, "#album-grid .tile")
                     if tile.find_element(By.CLASS_NAME, "name").text == name]
            if not tiles:
                continue
            tiles[0].click()
            wait(lambda: driver.execute_script("return document.getElementById('album-photo').dataset.shownBy")
                 and answers(driver, "album-answers"), 20)
            report["album_" + name] = {"photo": driver.execute_script(PIXELS, "album-photo"),
                                       "drawn": driver.execute_script(DRAWN, "album-overlay"),
                                       "answers": answers(driver, "album-answers")}
            if name == "heic_irot.heic":
                report["album_heic_1280_overflow"] = at_width(driver, 1280, 1000, "album-heic-1280.png", out,
                                                              "album-opened")
                report["album_heic_390_overflow"] = at_width(driver, 390, 844, "album-heic-390.png", out,
                                                             "album-opened")
            driver.find_element(By.ID, "album-close").click()

        # Nothing asked of /v1/models since the models settled: the polling stopped.
        report["model_requests_at_end"] = driver.execute_script(MODEL_REQUESTS)
        report["console_errors"] = [entry["message"] for entry in driver.get_log("browser")
                                    if entry.get("level") == "SEVERE"]
    finally:
        driver.quit()
        with open(os.path.join(out, "report.json"), "w") as file:
            json.dump(report, file, indent=1)
        # The test waits for the marker: a failure before it must not leave the test waiting.
        if not os.path.exists(marker):
            with open(marker, "w") as file:
                file.write("the check ended before the models were seen loading\n")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
