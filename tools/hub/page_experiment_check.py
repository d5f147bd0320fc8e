#!/usr/bin/env python3
"""Reads a model's experiments through the hub's page (`GET /` of `netrunner hub serve`) in Debian's
headless Chromium through chromedriver, with the admin key typed in, and acts on them as a person
would: experiment 1's figures per variant as the page shows them, its chart's intervals, its
guardrails and history; a conclusion the alias's gate refuses (the hub's 409 in the status line),
then Stop; an experiment started from the Start form, then concluded. What the page showed is
printed as one JSON object on the last line for the Swift test (HubPageExperimentTests);
screenshots at 1280 and 390 pixels wide go to OUT/hub-page-experiments-1280.png and
OUT/hub-page-experiments-390.png.

The hub must hold a model `mnv2` with versions 1 and 2, experiment 1 running on `production`
(1:50 2:50) with events reported, version 2 failed against `production`'s gate, and no
experiment or gate on `staging`.

Usage: .venv-test/bin/python tools/hub/page_experiment_check.py HUB_URL ADMIN_KEY OUT
"""
import json
import os
import sys

from browser import Page, chromium, texts, wait_for
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select


def main():
    url, admin_key, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    driver = chromium(1280, 1100)

    page = Page(driver)
    find, fill, status = page.find, page.fill, page.status

    def experiment(id):
        found = driver.find_elements(By.CSS_SELECTOR, f'#experiments details.experiment[data-experiment="{id}"]')
        return found[0] if found else None

    def content(element):
        return element.get_attribute("textContent")

    def act(id, button, words):
        """Clicks experiment `id`'s `button`, confirms in the page's dialog, and returns the status line
        once it holds `words`."""
        experiment(id).find_element(By.CSS_SELECTOR, "button." + button).click()
        wait_for(lambda: find("confirm").get_attribute("open") is not None, "the confirmation")
        find("confirm-yes").click()
        return wait_for(lambda: words in status() and status(), words)

    report = {}
    try:
        page.open(url, admin_key)
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, '#models tbody tr[data-name="mnv2"]'), "the model")
        driver.find_element(By.CSS_SELECTOR, '#models tbody tr[data-name="mnv2"]').click()
        wait_for(lambda: experiment(1) and experiment(1).find_elements(By.CSS_SELECTOR, "table.arms tbody tr"),
                 "experiment 1's figures")
        shown = experiment(1)
        report["title"] = find("experiments-title").text
        report["summary"] = shown.find_element(By.TAG_NAME, "summary").text
        report["open"] = shown.get_attribute("open") is not None
        report["meta"] = content(shown.find_element(By.CSS_SELECTOR, "p.experiment-meta"))
        report["description"] = content(shown.find_element(By.CSS_SELECTOR, "p.experiment-description"))
        report["arms"] = [{cell.get_attribute("data-figure"): content(cell)
                           for cell in row.find_elements(By.TAG_NAME, "td")}
                          for row in shown.find_elements(By.CSS_SELECTOR, "table.arms tbody tr")]
        report["intervals"] = [line.get_attribute("data-version")
                               for line in shown.find_elements(By.CSS_SELECTOR, "svg.intervals line.interval")]
        report["estimates"] = len(shown.find_elements(By.CSS_SELECTOR, "svg.intervals line.estimate"))
        report["chart_labels"] = [content(text) for text in shown.find_elements(By.CSS_SELECTOR, "svg.intervals text")]
        # The chart drawn inside its experiment's box: every interval within the chart's width.
        report["chart_inside"] = driver.execute_script(
            "const chart = arguments[0].querySelector('svg.intervals').getBoundingClientRect();"
            "return [...arguments[0].querySelectorAll('svg.intervals line, svg.intervals text')].every((shape) => {"
            "  const box = shape.getBoundingClientRect();"
            "  return box.left >= chart.left - 1 && box.right <= chart.right + 1; })", shown)
        report["guardrails"] = [content(item) for item in shown.find_elements(By.CSS_SELECTOR, "ul.guardrails li")]
        report["history"] = [content(item) for item in shown.find_elements(By.CSS_SELECTOR, "ol.history li")]
        driver.execute_script("document.getElementById('experiments-section').scrollIntoView()")
        driver.save_screenshot(os.path.join(out, "hub-page-experiments-1280.png"))
        driver.set_window_size(390, 1400)
        driver.execute_script("document.getElementById('experiments-section').scrollIntoView()")
        report["narrow_overflow"] = driver.execute_script(
            "return document.documentElement.scrollWidth > document.documentElement.clientWidth")
        # The chart fits the narrow screen: no wider than its section.
        report["narrow_chart_fits"] = driver.execute_script(
            "const chart = document.querySelector('#experiments svg.intervals').getBoundingClientRect();"
            "return chart.width > 200 && chart.right <= document.documentElement.clientWidth")
        driver.save_screenshot(os.path.join(out, "hub-page-experiments-390.png"))
        driver.set_window_size(1280, 1100)
        # Concluding with version 2, which failed production's gate: the hub's 409, the experiment running on.
        Select(experiment(1).find_element(By.CSS_SELECTOR, "select.winner")).select_by_value("2")
        report["conclude_refused"] = act(1, "conclude", "not promoted")
        wait_for(lambda: any("conclude-refused" in content(item) for item in
                             experiment(1).find_elements(By.CSS_SELECTOR, "ol.history li")), "the refusal's entry")
        report["refused_entries"] = texts(
            driver, '#experiments details[data-experiment="1"] ol.history li.conclude-refused')
        report["stopped"] = act(1, "stop", "stopped;")
        wait_for(lambda: "stopped" in (experiment(1).get_attribute("class") or ""), "experiment 1 stopped")
        report["stopped_summary"] = content(experiment(1).find_element(By.TAG_NAME, "summary"))
        report["stopped_folded"] = experiment(1).get_attribute("open") is None
        # An experiment from the Start form, on an alias without a gate: concluded, its winner promoted.
        fill("experiment-alias", "staging")
        fill("experiment-variants", "1:50 2:50")
        fill("experiment-goal", "accepted")
        fill("experiment-guardrails", "crashes=0.05")
        find("start-experiment").click()
        report["started"] = wait_for(lambda: "started" in status() and status(), "the start")
        wait_for(lambda: experiment(2), "experiment 2")
        report["order"] = [element.get_attribute("data-experiment")
                           for element in driver.find_elements(By.CSS_SELECTOR, "#experiments details.experiment")]
        report["started_guardrails"] = [content(item) for item in
                                        experiment(2).find_elements(By.CSS_SELECTOR, "ul.guardrails li")]
        Select(experiment(2).find_element(By.CSS_SELECTOR, "select.winner")).select_by_value("2")
        report["concluded"] = act(2, "conclude", "promoted")
        report["console_errors"] = [entry["message"] for entry in driver.get_log("browser")
                                    if entry["level"] == "SEVERE" and " 409" not in entry["message"]]
    finally:
        driver.quit()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
