"""What the hub page checks share: Debian's headless Chromium through chromedriver, a wait with a
deadline, the texts of the elements a selector finds, and the page's elements by id."""
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


def chromium(width=1280, height=900):
    """Headless Chromium at `width` x `height`, keeping the page's console for get_log("browser")."""
    options = Options()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}"]:
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(condition, what, seconds=60):
    """`condition()`'s first true value, looked at every 0.1 s; exits naming `what` past `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit(f"timed out waiting for {what}")


def texts(driver, selector):
    """The text of every element `selector` finds."""
    return [element.text for element in driver.find_elements(By.CSS_SELECTOR, selector)]


class Page:
    """The hub page in `driver`: its elements by id, a field filled, the status line, and the
    admin key typed in."""

    def __init__(self, driver):
        self.driver = driver

    def find(self, id):
        return self.driver.find_element(By.ID, id)

    def fill(self, id, text):
        self.find(id).clear()
        self.find(id).send_keys(text)

    def status(self):
        return self.find("status").text

    def open(self, url, key):
        """The page at `url` with `key` in its key field, used."""
        self.driver.get(url + "/")
        self.find("key").send_keys(key)
        self.find("use-key").click()
