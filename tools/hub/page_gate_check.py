#!/usr/bin/env python3
"""Reads a model's gates through the hub's page (`GET /` of `netrunner hub serve`) in Debian's
headless Chromium through chromedriver, with the admin key typed in, and forces an alias past
its gate as a person would: each version's gate status in the versions table, one version's
metrics beside its baseline's and the rules it missed (its fold opened), the link to its
report, the hub's refusal (409) of a move to a version that failed, then the move forced with
a reason and the history showing it as forced. What the page showed is printed as one JSON
object for the Swift test (HubPageGateTests); screenshots at 1280 and 390 pixels wide go to
OUT/hub-page-gates-1280.png and OUT/hub-page-gates-390.png.

The hub must hold a model `mnv2` whose versions 2 (passed) and 3 (failed) were evaluated
against the gate of `production`, which points at 2.

Usage: .venv-test/bin/python tools/hub/page_gate_check.py HUB_URL ADMIN_KEY OUT
"""
import json
import os
import sys
import time

from browser import Page, chromium, wait_for
from selenium.webdriver.common.by import By


def main():
    url, admin_key, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    driver = chromium(1280, 1100)

    page = Page(driver)
    find, fill, status = page.find, page.fill, page.status

    def texts(selector):
        return [element.text for element in driver.find_elements(By.CSS_SELECTOR, selector)]

    report = {}
    try:
        page.open(url, admin_key)
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, '#models tbody tr[data-name="mnv2"]'), "the model")
        driver.find_element(By.CSS_SELECTOR, '#models tbody tr[data-name="mnv2"]').click()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#versions .gate-status"), "the gate statuses")
        # A gate set from the page: the hub evaluates every version against it.
        wait_for(lambda: find("set-gate").is_enabled(), "the gate controls")
        fill("gate-alias", "staging")
        fill("gate-bundles", "imagenet-sample")
        fill("gate-rules", "top5:threshold=0.8\nlatency_p50_ms:threshold=1000")
        find("set-gate").click()
        report["gate_set"] = wait_for(lambda: "gate on staging" in status() and status(), "the gate set")
        def staging_evaluated():
            staging = [text for text in texts("#versions .gate-badge") if text.startswith("staging: ")]
            if len(staging) == 3 and "staging: pending" not in staging:
                return True
            find("reload").click()
            time.sleep(0.5)
            return False

        wait_for(staging_evaluated, "the staging evaluations", seconds=120)
        report["statuses"] = texts("#versions tbody tr td.gate-cell .gate-badge")
        report["gates"] = texts("#gates .gate")
        report["staging_gate"] = next((text for text in report["gates"] if text.startswith("staging")), "")
        # Version 3's fold: the rules it missed, its metrics beside the baseline's, its report.
        row = driver.find_element(By.CSS_SELECTOR, '#versions tr.evaluation-row[data-version="3"]')
        row.find_element(By.CSS_SELECTOR, "details summary").click()
        driver.execute_script("document.querySelector('#versions').parentElement.scrollLeft = 0")
        report["summary"] = row.find_element(By.CSS_SELECTOR, "details summary").text
        report["failures"] = [item.text for item in row.find_elements(By.CSS_SELECTOR, "ul.failures li")]
        report["metrics"] = [[cell.text for cell in line.find_elements(By.TAG_NAME, "td")]
                             for line in row.find_elements(By.CSS_SELECTOR, "table.metrics tbody tr")]
        report["report_links"] = [link.get_attribute("href") for link in row.find_elements(By.TAG_NAME, "a")]
        report["report_title"] = driver.execute_script(
            "return fetch(arguments[0]).then((reply) => reply.text()).then((text) => "
            "(/<title>([^<]*)</.exec(text) || [])[1])", report["report_links"][0]) if report["report_links"] else None
        driver.save_screenshot(os.path.join(out, "hub-page-gates-1280.png"))
        # The move the gate refuses, in the hub's words; then forced with a reason.
        wait_for(lambda: find("set-alias").is_enabled(), "the controls")
        fill("alias-model", "mnv2")
        fill("alias-name", "production")
        fill("alias-targets", "3")
        find("set-alias").click()
        report["refusal"] = wait_for(lambda: "409" in status() or "gated" in status() and status(), "the 409")
        # Pointing it where it points already: a 200 that changes nothing.
        fill("alias-targets", "2")
        find("set-alias").click()
        report["unchanged"] = wait_for(lambda: "already serves" in status() and status(), "the no-op")
        fill("alias-targets", "3")
        fill("alias-force", "the kiosk needs the small model")
        find("set-alias").click()
        report["forced"] = wait_for(lambda: "production → 3" in status() and status(), "the forced move")
        report["history"] = texts('.alias[data-alias="production"] ol.history li')
        report["forced_entries"] = texts('.alias[data-alias="production"] ol.history li.forced')
        report["console_errors"] = [entry["message"] for entry in driver.get_log("browser")
                                    if entry["level"] == "SEVERE" and " 409" not in entry["message"]]
        driver.set_window_size(390, 1400)
        row = driver.find_element(By.CSS_SELECTOR, '#versions tr.evaluation-row[data-version="3"]')
        row.find_element(By.CSS_SELECTOR, "details summary").click()
        driver.execute_script("arguments[0].scrollIntoView()", row)
        report["narrow_overflow"] = driver.execute_script(
            "return document.documentElement.scrollWidth > document.documentElement.clientWidth")
        # The Gates column in view at 390 px without scrolling the table (issue 53).
        report["narrow_gates_visible"] = driver.execute_script(
            "const cell = document.querySelector('#versions tbody tr td.gate-cell');"
            "const box = cell.getBoundingClientRect();"
            "return box.width > 0 && box.left >= 0 && box.right <= document.documentElement.clientWidth")
        driver.save_screenshot(os.path.join(out, "hub-page-gates-390.png"))
    finally:
        driver.quit()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
