#!/usr/bin/env python3
"""Runs README.md's shell examples as a reader pasting them would, and checks what they print.

- Every ```sh block is run as one script (as if pasted into one shell: a server started in the
  background with `&` is there for the next lines) with bash from the repository root,
  `netrunner` on the PATH (the binary given as the first argument); any command exiting
  non-zero fails the check. A
  block right after an `<!-- readme: not run -->` line is skipped (the two setup commands,
  which are what runs this script).
- Every ``` block (no language) whose first line starts with `$ ` is a transcript: each `$ `
  line is run, and its stdout must match the lines below it. Timings are compared as `#`
  (`4.1 ms`, `mean 4.69`); a line ending in `...` matches any line starting with what comes
  before it; a line that is only `...` matches any number of lines.

- Every ```python block after an `<!-- readme: with netrunner serve -->` line is run with
  .venv-test's Python (scripts/setup-test-python.sh) while `netrunner serve` listens on
  127.0.0.1:8080; its output must be the block's last line, a comment (`# ...`).

`make install` installs into a scratch PREFIX, removed afterwards.

Usage: scripts/run-readme.py PATH/TO/netrunner
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
README = os.path.join(ROOT, "README.md")
TIMING = [
    (re.compile(r"\d+(\.\d+)? ms\b"), "# ms"),
    (re.compile(r"\b(mean|median|p90|p99|max|min) \d+(\.\d+)?"), r"\1 #"),
]


def normalized(line):
    line = line.rstrip()
    for pattern, replacement in TIMING:
        line = pattern.sub(replacement, line)
    return line


def blocks(text):
    """(line number, language, lines, skipped) of every fenced block."""
    lines = text.splitlines()
    found = []
    index = 0
    while index < len(lines):
        match = re.match(r"^```(\w*)\s*$", lines[index])
        if not match:
            index += 1
            continue
        start = index
        language = match.group(1)
        index += 1
        body = []
        while index < len(lines) and not lines[index].startswith("```"):
            body.append(lines[index])
            index += 1
        before = [line.strip() for line in lines[max(0, start - 2):start]]
        found.append((start + 1, language, body, "<!-- readme: not run -->" in before))
        index += 1
    return found


INSTALL_PREFIX = tempfile.mkdtemp(prefix="netrunner-readme-")


# A block may build the release binary from nothing (`make install` in a fresh clone: about ten
# minutes on two busy cores), so the bound is for a block that hangs, not a slow one.
BLOCK_SECONDS = 1800


def run(command, binary_folder):
    # `make install` goes to a scratch prefix: checking the README installs nothing for the user.
    environment = dict(
        os.environ, PATH=binary_folder + os.pathsep + os.environ.get("PATH", ""), PREFIX=INSTALL_PREFIX)
    started = time.monotonic()
    try:
        result = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command], cwd=ROOT, env=environment, capture_output=True,
            text=True, timeout=BLOCK_SECONDS)
    except subprocess.TimeoutExpired as expired:
        output = expired.stderr or expired.stdout or b""
        if isinstance(output, bytes):
            output = output.decode("utf-8", "replace")
        return subprocess.CompletedProcess(
            expired.cmd, 124, "", f"timed out after {BLOCK_SECONDS} s; the last it printed: {output[-600:]}")
    seconds = time.monotonic() - started
    if seconds > 60:
        first = next((line for line in command.splitlines() if line.strip() and line != "set -e"), "")
        print(f"run-readme: a block took {seconds:.0f} s: {first[:80]}", file=sys.stderr)
    return result


def with_server(text, number):
    """Whether the block starting at line `number` is marked to run against a server."""
    lines = text.splitlines()
    return any("<!-- readme: with netrunner serve -->" in line for line in lines[max(0, number - 3):number - 1])


def run_python(body, binary_folder):
    """Runs a Python block against `netrunner serve` on port 8080; a problem, or None."""
    python = os.path.join(ROOT, ".venv-test", "bin", "python")
    if not os.access(python, os.X_OK):
        return "no .venv-test (run scripts/setup-test-python.sh)"
    expected = body[-1].lstrip("# ").strip() if body and body[-1].startswith("#") else None
    server = subprocess.Popen(
        [os.path.join(binary_folder, "netrunner"), "serve", "--port", "8080"], cwd=ROOT,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ready = subprocess.run(
            ["curl", "--silent", "--retry", "60", "--retry-connrefused", "--retry-delay", "1", "--fail",
             "http://127.0.0.1:8080/v2/health/ready"], capture_output=True, timeout=120)
        if ready.returncode != 0:
            return "netrunner serve did not become ready on 127.0.0.1:8080"
        result = subprocess.run([python, "-c", "\n".join(body)], cwd=ROOT, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            return f"the Python block exited {result.returncode}: {result.stderr.strip()[-800:]}"
        if expected is not None and result.stdout.strip() != expected:
            return f"the Python block printed {result.stdout.strip()!r}, the README shows {expected!r}"
        return None
    finally:
        server.terminate()
        server.wait(timeout=30)


def matches(expected, actual):
    """Whether the transcript's expected lines match the output's lines."""
    expected = [normalized(line) for line in expected]
    actual = [normalized(line) for line in actual]

    def match_from(e, a):
        if e == len(expected):
            return a == len(actual)
        line = expected[e]
        if line.strip() == "...":
            return any(match_from(e + 1, skip) for skip in range(a, len(actual) + 1))
        if a == len(actual):
            return False
        if line.endswith("..."):
            ok = actual[a].startswith(line[:-3].rstrip())
        else:
            ok = actual[a] == line
        return ok and match_from(e + 1, a + 1)

    return match_from(0, 0)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    folder = os.path.dirname(binary)
    if os.path.basename(binary) != "netrunner" or not os.access(binary, os.X_OK):
        print(f"run-readme: {binary} is not an executable named netrunner", file=sys.stderr)
        return 2
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    failures = []
    commands = 0
    for number, language, body, skipped in blocks(text):
        if skipped:
            continue
        if language == "sh":
            script = "set -e\n" + "\n".join(body) + "\n"
            commands += sum(1 for line in body if line.strip() and not line.lstrip().startswith("#"))
            result = run(script, folder)
            if result.returncode != 0:
                failures.append(
                    f"README.md:{number}: the block exited {result.returncode}: "
                    + (result.stderr.strip() or result.stdout.strip())[-800:])
        elif language == "python" and with_server(text, number):
            commands += 1
            failure = run_python(body, folder)
            if failure:
                failures.append(f"README.md:{number}: {failure}")
        elif language == "" and body and body[0].startswith("$ "):
            index = 0
            while index < len(body):
                command = body[index][2:]
                index += 1
                expected = []
                while index < len(body) and not body[index].startswith("$ "):
                    expected.append(body[index])
                    index += 1
                commands += 1
                result = run(command, folder)
                output = result.stdout.splitlines()
                if result.returncode != 0:
                    failures.append(
                        f"README.md:{number}: `{command}` exited {result.returncode}: {result.stderr.strip()[-600:]}")
                elif not matches(expected, output):
                    failures.append(
                        f"README.md:{number}: `{command}` printed what the README does not show:\n  README:\n    "
                        + "\n    ".join(expected) + "\n  printed:\n    " + "\n    ".join(output))
    shutil.rmtree(INSTALL_PREFIX, ignore_errors=True)
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"run-readme: {commands} commands from README.md, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
