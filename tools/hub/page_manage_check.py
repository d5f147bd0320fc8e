#!/usr/bin/env python3
"""Changes a hub through its page (`GET /` of `netrunner hub serve`) in Debian's headless
Chromium through chromedriver, as a person would: first without a key (the controls must be
disabled and say a key is needed), then with a read-only key (the hub's refusal must show in
the status line), then with the admin key: uploads FILE as a new version of `mine` with the
alias `staging`, points `production` at versions 1 and 2 weighted 90/10, and rolls
`production` back. What the page showed at each step is printed as one JSON object for the
Swift test (HubPageManageTests), which checks the hub's JSON itself; a screenshot goes to
OUT/hub-page-manage.png.

The hub must allow anonymous reading and hold a model `mine` with version 1 and an alias
`production` pointing at it.

Last, OTHER (a model of another task) uploaded to `mine`: refused, the status line pointing at
the task-change checkbox, then published with it ticked.

Usage: .venv-test/bin/python tools/hub/page_manage_check.py HUB_URL READ_KEY ADMIN_KEY FILE OUT OTHER
"""
import json
import os
import sys

from browser import chromium, wait_for, texts
from selenium.webdriver.common.by import By


def main():
    url, read_key, admin_key, file, out, other = sys.argv[1:7]
    os.makedirs(out, exist_ok=True)
    driver = chromium(1280, 900)

    def find(id):
        return driver.find_element(By.ID, id)

    def status():
        return find("status").text

    def use_key(key):
        find("key").clear()
        find("key").send_keys(key)
        find("use-key").click()

    def fill(id, text):
        find(id).clear()
        find(id).send_keys(text)

    def until_status(part, what):
        # Each of these is a request and the page's refresh after it (a handful of requests more):
        # on a loaded CI machine, beside the hub flood tests, one took over the usual 60 s. What the
        # status line said by then goes into the message.
        try:
            wait_for(lambda: part in status() or status().startswith("The "), what, seconds=180)
        except SystemExit as timeout:
            raise SystemExit(f"{timeout}; the status line said {status()!r}")
        return status()

    report = {}
    try:
        driver.get(url + "/")
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#models tbody tr[data-name]"), "the models")
        driver.find_element(By.CSS_SELECTOR, '#models tbody tr[data-name="mine"]').click()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, ".alias button.roll-back"), "the aliases")
        # Without a key: every control that changes the hub is disabled, and the page says why.
        controls = ["upload-name", "upload-file", "upload-alias", "upload", "alias-model", "alias-name",
                    "alias-targets", "set-alias", "rollback"]
        report["enabled_without_key"] = [id for id in controls if find(id).is_enabled()]
        report["alias_buttons_enabled_without_key"] = [
            button.text for button in driver.find_elements(By.CSS_SELECTOR, ".alias button") if button.is_enabled()]
        report["note_without_key"] = find("manage-note").text
        # A key with the read scope: the controls work, the hub refuses, the status line says so.
        use_key(read_key)
        wait_for(lambda: find("set-alias").is_enabled(), "the controls with a key")
        fill("alias-name", "production")
        fill("alias-targets", "1")
        find("set-alias").click()
        report["read_key_refusal"] = wait_for(lambda: status(), "the refusal")
        # The admin key: upload, a staged rollout, a rollback.
        use_key(admin_key)
        wait_for(lambda: find("upload").is_enabled() and status() == "", "the admin key")
        fill("upload-name", "mine")
        find("upload-file").send_keys(os.path.abspath(file))
        fill("upload-alias", "staging")
        find("upload").click()
        report["upload"] = until_status("Published", "the upload")
        report["versions"] = texts(driver, "#versions tbody td:first-child")
        fill("alias-model", "mine")
        fill("alias-name", "production")
        fill("alias-targets", "1:90 2:10")
        find("set-alias").click()
        report["rollout"] = until_status("production →", "the staged rollout")
        report["aliases_after_rollout"] = texts(driver, ".alias-line")
        find("rollback").click()
        report["rollback"] = until_status("rolled back", "the rollback")
        report["aliases_after_rollback"] = texts(driver, ".alias-line")
        report["history"] = texts(driver, '.alias[data-alias="production"] ol.history li')
        # A bad weight: the hub's words in the status line.
        fill("alias-targets", "1:50 2:10")
        find("set-alias").click()
        report["bad_weights"] = wait_for(lambda: "100" in status() and status(), "the hub's refusal of 60%")
        # A model of another task under the same name: refused, then published with the box ticked.
        fill("upload-alias", "")
        find("upload-file").send_keys(os.path.abspath(other))
        find("upload").click()
        report["task_change_refusal"] = wait_for(lambda: "tick" in status() and status(), "the task change refused")
        find("upload-task-change").click()
        find("upload").click()
        report["task_change"] = until_status("Published", "the task change")
        fetched = driver.execute_script(
            "return performance.getEntriesByType('resource').map((entry) => entry.name)")
        report["key_in_url"] = any(key in name for name in fetched for key in [read_key, admin_key])
        report["console_errors"] = [entry["message"] for entry in driver.get_log("browser")
                                    if entry["level"] == "SEVERE" and " 40" not in entry["message"]]
        driver.save_screenshot(os.path.join(out, "hub-page-manage.png"))
    finally:
        driver.quit()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
