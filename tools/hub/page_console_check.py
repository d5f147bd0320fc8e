#!/usr/bin/env python3
"""Deletes a version and makes and revokes a key through the hub's page (`GET /` of `netrunner
hub serve`) in Debian's headless Chromium through chromedriver, as a person would, and uses the
key the page showed against the hub's API while it lives and after it is revoked.

First without a key (no keys section, Delete disabled), then with a publish key (no keys
section; the hub's refusal of a delete in the status line), then with the admin key: deletes
version 1 of `mine` (an alias points to it: the hub's refusal shows), cancels the delete of
version 2 and then confirms it, starts to make a key over an existing name (the page asks
before replacing it; cancelled), makes a publish key `laptop` (its secret shown once, with a
Copy button), uses that secret against the hub, hides it with Done, revokes `laptop` and uses
the secret again (401). What the page showed at each step is printed as one JSON object for
the Swift test (HubPageManageTests), which checks the hub's JSON itself. Full-page screenshots
at 1280 and 390 CSS pixels wide go to OUT (hub-console-1280.png, hub-console-390.png, and the
confirmation at 390: hub-console-confirm-390.png).

The hub must allow anonymous reading and hold a model `mine` with versions 1 and 2, an alias
`production` pointing at version 1 only, and a key `publisher` (publish scope) besides the
admin's.

Usage: .venv-test/bin/python tools/hub/page_console_check.py HUB_URL PUBLISH_KEY ADMIN_KEY OUT
"""
import base64
import json
import os
import sys
import urllib.error
import urllib.request

from browser import chromium, wait_for, texts
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select


def api(url, path, key):
    """A GET of the hub's API with a key: the status and the body's error_description, if any."""
    request = urllib.request.Request(url + path, headers={"Authorization": "Bearer " + key})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, ""
    except urllib.error.HTTPError as error:
        try:
            return error.code, json.loads(error.read()).get("error_description", "")
        except ValueError:
            return error.code, ""


def main():
    url, publish_key, admin_key, out = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    driver = chromium(1280, 900)

    def find(id):
        return driver.find_element(By.ID, id)

    def status():
        return find("status").text

    def use_key(key):
        before = keys_requests()
        find("key").clear()
        find("key").send_keys(key)
        find("use-key").click()
        # The page asks GET /v1/keys once per key entered: the keys section follows its answer.
        wait_for(lambda: keys_requests() > before, "the page asking the hub for its keys")

    def keys_requests():
        return driver.execute_script(
            "return performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/v1/keys')).length")

    def fill(id, text):
        find(id).clear()
        find(id).send_keys(text)

    def versions():
        return texts(driver, "#versions tbody td:first-child")

    def delete_button(version):
        return driver.find_element(By.CSS_SELECTOR, f'#versions .delete-version[data-version="{version}"]')

    def dialog_open():
        return find("confirm").get_attribute("open") is not None

    def answer(yes):
        """Reads the open confirmation, then confirms or cancels it."""
        wait_for(dialog_open, "the confirmation")
        asked = {"title": find("confirm-title").text, "text": find("confirm-text").text,
                 "button": find("confirm-yes").text}
        find("confirm-yes" if yes else "confirm-no").click()
        wait_for(lambda: not dialog_open(), "the confirmation to close")
        return asked

    def until_status(part, what):
        wait_for(lambda: part in status(), what)
        return status()

    def shot(name, width, full=True):
        """A screenshot at `width` CSS pixels (a phone's viewport at 390): the whole page, or what the
        viewport shows."""
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 844 if width < 600 else 900, "deviceScaleFactor": 1, "mobile": width < 600})
        # The viewport at that width: the window's (1280) or, on a phone, the layout viewport's.
        wait_for(lambda: width in driver.execute_script(
            "return [window.innerWidth, document.documentElement.clientWidth]"), f"a {width} px viewport")
        if full:
            # From the top: the status line sticks to the viewport's top once the page is scrolled.
            driver.execute_script("window.scrollTo(0, 0)")
            wait_for(lambda: driver.execute_script("return window.scrollY === 0"), "the page at its top")
        size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        whole = {"captureBeyondViewport": True,
                 "clip": {"x": 0, "y": 0, "width": max(width, size["width"]), "height": size["height"], "scale": 1}}
        picture = driver.execute_cdp_cmd("Page.captureScreenshot", dict({"format": "png"}, **(whole if full else {})))
        with open(os.path.join(out, name), "wb") as file:
            file.write(base64.b64decode(picture["data"]))
        # Wider than the viewport would scroll the whole page sideways (the tables scroll in their sections).
        report.setdefault("page_widths", {})[str(width)] = driver.execute_script(
            "return Math.max(window.innerWidth, document.documentElement.scrollWidth)")

    def normal_size():
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    report = {}
    secret = ""
    try:
        driver.get(url + "/")
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#models tbody tr[data-name]"), "the models")
        driver.find_element(By.CSS_SELECTOR, '#models tbody tr[data-name="mine"]').click()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#versions .delete-version"), "the versions")
        # Without a key: no keys section, and Delete is disabled.
        report["keys_shown_without_key"] = find("keys").is_displayed()
        report["delete_enabled_without_key"] = [
            button.get_attribute("data-version")
            for button in driver.find_elements(By.CSS_SELECTOR, ".delete-version") if button.is_enabled()]
        # A publish key: still no keys section (the hub refuses it GET /v1/keys); a delete is refused.
        use_key(publish_key)
        wait_for(lambda: delete_button(2).is_enabled(), "Delete with a key")
        report["keys_shown_with_publish_key"] = find("keys").is_displayed()
        delete_button(2).click()
        answer(True)
        report["publish_key_delete"] = wait_for(lambda: "refused" in status() and status(), "the hub's refusal")
        # The admin key: the keys section lists the keys.
        use_key(admin_key)
        wait_for(lambda: find("keys").is_displayed(), "the keys section")
        report["keys_listed"] = [
            [cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")[:2]]
            for row in driver.find_elements(By.CSS_SELECTOR, "#key-list tbody tr[data-key]")]
        report["key_dates"] = texts(driver, "#key-list tbody td.when")
        # Version 1 is what production points to: the hub refuses, in its words.
        wait_for(lambda: delete_button(1).is_enabled(), "Delete with the admin key")
        delete_button(1).click()
        report["confirm_delete"] = answer(True)
        report["aliased_delete"] = until_status("points to", "the hub's refusal of an aliased version")
        report["versions_after_refusal"] = versions()
        # Version 2: cancelled, then deleted.
        delete_button(2).click()
        answer(False)
        report["versions_after_cancel"] = versions()
        delete_button(2).click()
        report["confirm_delete_2"] = answer(True)
        report["deleted"] = until_status("Deleted", "the delete")
        wait_for(lambda: versions() == ["1"], "the list without version 2")
        report["versions_after_delete"] = versions()
        report["latest_after_delete"] = texts(driver, '#models tbody tr[data-name="mine"] td:nth-child(3)')
        # A name that is taken: the page asks before replacing that key (cancelled here).
        fill("key-name", "publisher")
        find("make-key").click()
        report["replace_confirm"] = answer(False)
        report["key_shown_after_cancel"] = find("new-key").is_displayed()
        # A new publish key: its secret, once, with Copy.
        fill("key-name", "laptop")
        Select(find("key-scope")).select_by_value("publish")
        find("make-key").click()
        report["made"] = until_status("Made the key", "the new key")
        wait_for(lambda: find("new-key").is_displayed(), "the new key's secret")
        secret = find("new-key-secret").get_attribute("value")
        report["secret"] = secret
        report["new_key_title"] = find("new-key-title").text
        report["new_key_note"] = driver.find_element(By.CSS_SELECTOR, "#new-key .warning").text
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, '#key-list tr[data-key="laptop"]'), "laptop listed")
        report["keys_after_make"] = [
            [cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")[:2]]
            for row in driver.find_elements(By.CSS_SELECTOR, "#key-list tbody tr[data-key]")]
        report["key_list_text"] = find("key-list").text
        find("copy-key").click()
        report["copy"] = wait_for(lambda: ("Copied" in status() or "copy" in status()) and status(), "the copy")
        # The secret the page showed works against the hub (a publish key: reading yes, the keys no).
        report["secret_reads"] = api(url, "/v1/models/mine", secret)[0]
        report["secret_lists_keys"] = api(url, "/v1/keys", secret)
        shot("hub-console-1280.png", 1280)
        shot("hub-console-390.png", 390)
        normal_size()
        find("new-key-done").click()
        report["secret_after_done"] = [find("new-key").is_displayed(), find("new-key-secret").get_attribute("value")]
        # Revoke laptop: asked first, then gone from the list, and the secret is refused.
        driver.find_element(By.CSS_SELECTOR, '#key-list tr[data-key="laptop"] .revoke-key').click()
        wait_for(dialog_open, "the revoke confirmation")
        shot("hub-console-confirm-390.png", 390, full=False)
        normal_size()
        report["revoke_confirm"] = answer(True)
        report["revoked"] = until_status("Revoked", "the revoke")
        wait_for(lambda: not driver.find_elements(By.CSS_SELECTOR, '#key-list tr[data-key="laptop"]'), "laptop gone")
        report["keys_after_revoke"] = [row.get_attribute("data-key")
                                       for row in driver.find_elements(By.CSS_SELECTOR, "#key-list tbody tr")]
        report["secret_after_revoke"] = api(url, "/v1/models/mine", secret)
        fetched = driver.execute_script(
            "return performance.getEntriesByType('resource').map((entry) => entry.name)")
        report["key_in_url"] = any(key in name for name in fetched for key in [publish_key, admin_key, secret] if key)
        # Refusals (403, 409) are logged by Chromium as failed loads; anything else is an error of the page.
        report["console_errors"] = [entry["message"] for entry in driver.get_log("browser")
                                    if entry["level"] == "SEVERE" and " 40" not in entry["message"]]
    finally:
        driver.quit()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
