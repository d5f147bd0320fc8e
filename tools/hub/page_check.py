#!/usr/bin/env python3
"""Opens the hub's page (`GET /` of `netrunner hub serve`) in Debian's headless Chromium through
chromedriver, as a person would: first without a key (a private hub asks for one), then with
the key typed in; reads the models, then one model's versions, aliases with their history and
weights, and adoption from the DOM. A screenshot of the page goes to OUT/hub-page.png; the
figures are printed as one JSON object for the Swift test (HubFolderAndPageTests) to assert on.

The hub must hold a model `mine` with versions 1 and 2 and aliases `production` and `staging`.

Usage: .venv-test/bin/python tools/hub/page_check.py HUB_URL KEY OUT
"""
import json
import os
import sys

from browser import chromium, wait_for, texts
from selenium.webdriver.common.by import By


def main():
    url, key, out = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    driver = chromium(1280, 900)
    report = {}
    try:
        driver.get(url + "/")
        report["title"] = driver.title
        report["without_key"] = wait_for(lambda: driver.find_element(By.ID, "status").text, "the key request")
        driver.find_element(By.ID, "key").send_keys(key)
        driver.find_element(By.ID, "use-key").click()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#models tbody tr[data-name]"), "the models")
        report["models"] = [row.get_attribute("data-name")
                            for row in driver.find_elements(By.CSS_SELECTOR, "#models tbody tr[data-name]")]
        report["descriptions"] = texts(driver, "#models tbody td:nth-child(2)")
        report["model_aliases"] = texts(driver, "#models tbody td:nth-child(4)")
        # A description from the hub that is markup must stay text.
        report["markup_elements"] = len(driver.find_elements(By.CSS_SELECTOR, "#models tbody b, #models tbody img"))
        driver.find_element(By.CSS_SELECTOR, '#models tbody tr[data-name="mine"]').click()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#versions tbody tr"), "the versions")
        wait_for(lambda: driver.find_element(By.ID, "adoption").text, "the adoption")
        report["model_name"] = driver.find_element(By.ID, "model-name").text
        report["versions"] = texts(driver, "#versions tbody td:first-child")
        report["aliases"] = texts(driver, ".alias-line")
        report["history"] = texts(driver, '.alias[data-alias="production"] ol.history li')
        report["adoption"] = driver.find_element(By.ID, "adoption").text
        report["status"] = driver.find_element(By.ID, "status").text
        # The key went in a header: not in the page's address nor in any address it fetched.
        fetched = driver.execute_script(
            "return performance.getEntriesByType('resource').map((entry) => entry.name)")
        report["fetched"] = sorted({name.replace(url, "") for name in fetched})
        report["key_in_url"] = key in driver.current_url or any(key in name for name in fetched)
        report["console_errors"] = [entry["message"] for entry in driver.get_log("browser")
                                    if entry["level"] == "SEVERE" and "401" not in entry["message"]]
        driver.save_screenshot(os.path.join(out, "hub-page.png"))
    finally:
        driver.quit()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
