#!/usr/bin/env python3
"""Drives the web app of `netrunner serve` in a real browser, as a person would: Debian's
headless Chromium through chromedriver (selenium from PyPI), with a fake camera fed from a
video made from the committed photos by ffmpeg.

1. A clip (Y4M, what Chromium's fake camera reads) showing coffee.jpg, then eagle.jpg, then
   two_portraits.jpg, two seconds each, made with ffmpeg.
2. The page with the classifier: start the camera, collect the answers shown while the clip
   plays, the latency figures and what the model sees.
3. The face detector: the boxes drawn over the video.
4. A photo picked with the file input (what a drop does): its answer.
5. Settings: a model imported by URL (IMPORT_URL, a zipped bundle on a local web server), then
   picked, answering the eagle photo.
6. The album (the server's --albums folder): the model over every photo with the progress
   bar, the grid of thumbnails with answers, one photo opened.
7. Streams (the server's --stream, a clip it reads itself in live mode): the latest answered
   frame with the boxes the server drew, and the answers beside it.
Screenshots of each step go to OUT; the figures are printed as one JSON object for the Swift
test to assert on.

Usage: .venv-test/bin/python tools/serve/browser_check.py URL OUT IMPORT_URL [ALBUM_SIZE]
"""
import json
import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PHOTOS = ["Tests/Fixtures/Photos/test/coffee.jpg", "Tests/Fixtures/Photos/test/eagle.jpg",
          "Tests/Fixtures/Photos/faces/two_portraits.jpg"]


def make_clip(out):
    """Two seconds of each photo, 640x480 letterboxed, 10 frames/s, as Y4M."""
    clip = os.path.join(out, "camera.y4m")
    inputs = []
    for photo in PHOTOS:
        inputs += ["-loop", "1", "-t", "2", "-i", os.path.join(ROOT, photo)]
    scale = "scale=640:480:force_original_aspect_ratio=decrease,pad=640:480:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=10"
    streams = "".join(f"[{i}:v]{scale}[v{i}];" for i in range(len(PHOTOS)))
    concat = "".join(f"[v{i}]" for i in range(len(PHOTOS))) + f"concat=n={len(PHOTOS)}:v=1:a=0,format=yuv420p[out]"
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", *inputs, "-filter_complex", streams + concat,
                    "-map", "[out]", clip], check=True)
    return clip


def browser(clip, height=900):
    """Headless Chromium whose fake camera plays `clip`, in a window 1280 wide."""
    options = Options()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                 f"--use-file-for-fake-video-capture={clip}", f"--window-size=1280,{height}"]:
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def answers(driver, panel="answers"):
    """The labels the page shows now, read in one step (the page replaces them every frame)."""
    return driver.execute_script(
        f"return [...document.querySelectorAll('#{panel} .row')].map((row) => row.firstChild.firstChild.textContent)")


def wait(condition, seconds):
    """Polls until the condition holds or the time is up; returns its last value."""
    deadline, value = time.time() + seconds, None
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    return value


def settled(read, quiet, seconds):
    """Polls a value until it has not changed for `quiet` seconds (or `seconds` are up)."""
    deadline, value, since = time.time() + seconds, read(), time.time()
    while time.time() < deadline and time.time() - since < quiet:
        time.sleep(0.1)
        now = read()
        if now != value:
            value, since = now, time.time()
    return value


def main():
    url, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    clip = make_clip(out)
    report = {}
    driver = browser(clip)
    try:
        driver.get(url)
        time.sleep(1)
        select = Select(driver.find_element(By.ID, "model"))
        report["models"] = [option.get_attribute("value") for option in select.options]
        select.select_by_value("mobilenet-v2-1.0-224-uint8")
        driver.find_element(By.ID, "interval").clear()
        driver.find_element(By.ID, "interval").send_keys("100")
        driver.find_element(By.ID, "camera").click()
        seen, shots, deadline = [], 0, time.time() + 14
        while time.time() < deadline:
            top = answers(driver)
            if top and (not seen or seen[-1] != top[0]):
                seen.append(top[0])
                if shots < 3:
                    driver.save_screenshot(os.path.join(out, f"camera-classifier-{shots + 1}.png"))
                    shots += 1
            time.sleep(0.2)
        report["classifier_labels"] = seen
        report["inference"] = driver.find_element(By.ID, "t-inference").text
        report["seen_src"] = (driver.find_element(By.ID, "seen").get_attribute("src") or "")[:22]
        driver.find_element(By.ID, "pause").click()
        # The frame in flight when pausing still gets its answer, however slow the machine:
        # the count must settle (unchanged for a second), then stay put.
        frames = settled(lambda: int(driver.find_element(By.ID, "t-count").text), 1.0, 15)
        report["frames"] = frames
        time.sleep(1.5)
        report["frames_while_paused"] = int(driver.find_element(By.ID, "t-count").text) - frames

        select.select_by_value("face-detection-short-range")
        report["answers_after_switch"] = answers(driver)  # the classifier's answers are gone
        driver.find_element(By.ID, "pause").click()  # resume, now with the detector
        boxes, deadline = 0, time.time() + 14
        while time.time() < deadline and boxes == 0:
            if "face" in answers(driver):
                boxes = len([a for a in answers(driver) if a == "face"])
                driver.save_screenshot(os.path.join(out, "camera-detector.png"))
            time.sleep(0.2)
        report["detector_faces"] = boxes
        driver.find_element(By.ID, "camera").click()  # stop
        # The header says the camera is off (not "not connected", which is for a lost socket).
        report["status_camera_off"] = wait(lambda: (lambda text: text if "camera off" in text else None)(
            driver.find_element(By.ID, "status").text), 5) or driver.find_element(By.ID, "status").text

        select.select_by_value("mobilenet-v2-1.0-224-uint8")
        time.sleep(0.5)
        driver.execute_script("document.getElementById('answers').replaceChildren()")
        driver.find_element(By.ID, "file").send_keys(os.path.join(ROOT, "Tests/Fixtures/Photos/test/eagle.jpg"))
        deadline = time.time() + 10
        while time.time() < deadline and not answers(driver):
            time.sleep(0.2)
        report["photo_labels"] = answers(driver)
        # What the model saw of the picked photo (not the camera's last frame, not a broken image).
        report["photo_seen_width"] = wait(lambda: driver.execute_script(
            "const i = document.getElementById('seen'); return !i.hidden && i.complete ? i.naturalWidth : 0"), 10)
        # The model panel: named rows, not a JSON dump.
        report["details_rows"] = driver.execute_script(
            "return [...document.querySelectorAll('#details tr')].map((r) => [r.cells[0].textContent, r.cells[1].textContent])")
        driver.save_screenshot(os.path.join(out, "photo.png"))

        # Settings: import a model by URL, wait for it to be served, and use it.
        driver.find_element(By.ID, "tab-settings").click()
        driver.find_element(By.ID, "import-url").send_keys(sys.argv[3])
        driver.find_element(By.ID, "import").click()
        status = wait(lambda: (lambda text: text if text.startswith(("Imported", "Cannot", "No ", "A model"))
                               else None)(driver.find_element(By.ID, "import-status").text), 60)
        report["import_status"] = status
        driver.save_screenshot(os.path.join(out, "settings-import.png"))
        report["model_after_import"] = Select(driver.find_element(By.ID, "model")).first_selected_option \
            .get_attribute("value")
        driver.find_element(By.ID, "tab-live").click()
        driver.execute_script("document.getElementById('answers').replaceChildren()")
        driver.find_element(By.ID, "file").send_keys(os.path.join(ROOT, "Tests/Fixtures/Photos/test/eagle.jpg"))
        report["imported_photo_labels"] = wait(lambda: answers(driver), 10)

        # The album: run the (imported) model over it, then open one photo.
        driver.find_element(By.ID, "tab-album").click()
        wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#album option"), 5)
        driver.find_element(By.ID, "album-run").click()
        album_size = int(sys.argv[4]) if len(sys.argv) > 4 else 4
        wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#album-grid .tile")) == album_size, 30)
        wait(lambda: driver.execute_script(
            "return [...document.querySelectorAll('#album-grid img')].every((i) => i.complete && i.naturalWidth)"), 10)
        report["album_status"] = driver.find_element(By.ID, "album-status").text
        report["album_captions"] = driver.execute_script(
            "return [...document.querySelectorAll('#album-grid .tile div:not(.name):not(.no-preview)')]"
            ".map((d) => d.textContent)")
        # A photo that failed shows "no preview" (as bulk's report does), not a broken image.
        report["album_no_preview"] = driver.execute_script(
            "return [...document.querySelectorAll('#album-grid .tile .no-preview')].map((d) => d.textContent)")
        report["album_names"] = driver.execute_script(
            "return [...document.querySelectorAll('#album-grid .tile .name')].map((d) => d.textContent)")
        report["album_thumbnails_loaded"] = driver.execute_script(
            "return [...document.querySelectorAll('#album-grid img')].filter((i) => i.naturalWidth > 0).length")
        driver.save_screenshot(os.path.join(out, "album-grid.png"))
        driver.find_elements(By.CSS_SELECTOR, "#album-grid .tile")[2].click()
        report["album_opened_labels"] = wait(lambda: answers(driver, "album-answers"), 10)
        report["album_name_shown"] = driver.find_element(By.ID, "album-name").text  # as the file is named
        driver.save_screenshot(os.path.join(out, "album-opened.png"))
        # Streams: the server reads a clip of the two portraits; the page previews it.
        report["streams_tab_shown"] = driver.find_element(By.ID, "tab-streams").is_displayed()
        driver.find_element(By.ID, "tab-streams").click()
        report["stream_faces"] = len(wait(lambda: answers(driver, "stream-answers"), 15) or [])
        report["stream_frame_width"] = wait(lambda: driver.execute_script(
            "const i = document.getElementById('stream-frame'); return i.complete ? i.naturalWidth : 0"), 10)
        first = driver.find_element(By.ID, "stream-name").text
        report["stream_name"] = first
        report["stream_advances"] = bool(wait(lambda: driver.find_element(By.ID, "stream-name").text != first, 10))
        report["stream_status"] = driver.find_element(By.ID, "stream-status").text
        driver.save_screenshot(os.path.join(out, "streams.png"))
        report["console_errors"] = [entry["message"] for entry in driver.get_log("browser")
                                    if entry.get("level") == "SEVERE"]
    finally:
        driver.quit()
        # Kept beside the screenshots (CI keeps out/), whatever happened.
        with open(os.path.join(out, "report.json"), "w") as file:
            json.dump(report, file, indent=1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
