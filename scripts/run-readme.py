#!/usr/bin/env python3
"""Runs the shell examples of README.md and docs/*.md as a reader pasting them would, and checks
what they print.

- Every ```sh block is run as one script with bash from the repository root, `netrunner` on the
  PATH (the binary given as the argument); any command exiting non-zero fails the check. A
  block right after an `<!-- readme: not run -->` line is skipped (the two setup commands,
  which are what runs this script).
- Every ``` block (no language) whose first line starts with `$ ` is a transcript: each `$ `
  line is run, and its stdout must match the lines below it. Timings are compared as `#`
  (`4.1 ms`, `mean 4.69`); a line ending in `...` matches any line starting with what comes
  before it; a line that is only `...` matches any number of lines.
- Every ```python block after an `<!-- readme: with netrunner serve -->` line is run with
  .venv-test's Python (scripts/setup-test-python.sh) while `netrunner serve` listens on
  127.0.0.1:8080; its output must be the block's last line, a comment (`# ...`).

Each block must stand on its own, as a reader opening one guide pastes it into a fresh clone:
the blocks of all files run in a random order (the seed is printed; `--seed N` replays an
order), and before each block the scratch outputs a block may leave are removed (`out/`, and
anything untracked that appeared in `Models/` since the run began, such as an imported model),
so a block leaning on another's files fails. A block must also stop what it starts: processes
of its own still running a few seconds after it ends fail it (and are killed).

`make install` installs the debug build (CONFIG=debug, already built by `make test`) into a
scratch PREFIX, removed afterwards.

--installed PREFIX runs them as a user of an installed copy does (`make test-installed`): with
PREFIX/bin/netrunner, from a folder outside the clone holding a copy of what the blocks read
(Tests/Fixtures, Models, TestBundles, deploy, tools, the guides), with no toolchain on the PATH
and no LD_LIBRARY_PATH; a block marked `<!-- readme: clone only -->` (building from the clone)
is left out there.

Usage: scripts/run-readme.py [--seed N] [--only FILE]... [--installed PREFIX | PATH/TO/netrunner]
"""
import argparse
import glob
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TIMING = [
    (re.compile(r"\d+(\.\d+)? ms\b"), "# ms"),
    (re.compile(r"\b(mean|median|p90|p99|max|min) \d+(\.\d+)?"), r"\1 #"),
]
NOT_RUN = "<!-- readme: not run -->"
CLONE_ONLY = "<!-- readme: clone only -->"
# Where blocks run: the clone, or (--installed) a folder outside it with copies of what they read.
WORK = ROOT
# What an installed copy's user has: the tree's data, no sources. (--installed)
INSTALLED_DATA = ["Tests/Fixtures", "Models", "TestBundles", "deploy", "tools", "docs", "README.md"]
INSTALLED = False
WITH_SERVER = "<!-- readme: with netrunner serve -->"


def documents():
    """README.md and every guide in docs/, as paths relative to the repository root."""
    return ["README.md"] + sorted(os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def normalized(line):
    line = line.rstrip()
    for pattern, replacement in TIMING:
        line = pattern.sub(replacement, line)
    return line


def blocks(text):
    """(line number, language, lines, marks) of every fenced block; marks: the markers just before it."""
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
        before = " ".join(line.strip() for line in lines[max(0, start - 2):start])
        found.append((start + 1, language, body, before))
        index += 1
    return found


INSTALL_PREFIX = tempfile.mkdtemp(prefix="netrunner-readme-")


# The bound is for a block that hangs, not a slow one (`make install` copies the debug build
# `make test` made; it no longer builds the release binary, ten minutes on two busy cores).
BLOCK_SECONDS = 600
# How long a block's background processes may take to end after the block (a server draining).
LINGER_SECONDS = 10


def group_alive(group):
    try:
        os.killpg(group, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def run(command, binary_folder):
    """Runs a block (or a transcript's command) in a session of its own; its result, with a
    note in stderr when it left processes running."""
    # `make install` goes to a scratch prefix: checking the README installs nothing for the user.
    environment = dict(
        os.environ, PATH=binary_folder + os.pathsep + os.environ.get("PATH", ""), PREFIX=INSTALL_PREFIX,
        CONFIG="debug")
    if INSTALLED:
        # The installed copy and the system's tools only: no toolchain, no library path.
        environment["PATH"] = binary_folder + os.pathsep + "/usr/local/bin:/usr/bin:/bin"
        environment.pop("LD_LIBRARY_PATH", None)
    started = time.monotonic()
    process = subprocess.Popen(
        ["bash", "-o", "pipefail", "-c", command], cwd=WORK, env=environment, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=BLOCK_SECONDS)
        returncode = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        return subprocess.CompletedProcess(
            command, 124, "", f"timed out after {BLOCK_SECONDS} s; the last it printed: {(stderr or stdout)[-600:]}")
    deadline = time.monotonic() + LINGER_SECONDS
    while group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if group_alive(process.pid):
        os.killpg(process.pid, signal.SIGKILL)
        if returncode == 0:
            returncode = 1
        stderr += (
            f"\nthe block left processes running {LINGER_SECONDS} s after it ended (killed now): a block "
            "stops what it starts (a server: `trap 'kill $PID' EXIT`)")
    seconds = time.monotonic() - started
    if seconds > 60:
        first = next((line for line in command.splitlines() if line.strip() and line != "set -e"), "")
        print(f"run-readme: a block took {seconds:.0f} s: {first[:80]}", file=sys.stderr)
    return subprocess.CompletedProcess(command, returncode, stdout, stderr)


def untracked(folder):
    """The untracked, not ignored paths under `folder` (relative to the root), as git lists them;
    outside the clone (--installed), every path under it."""
    if WORK != ROOT:
        base = os.path.join(WORK, folder)
        return {os.path.join(folder, name) for name in os.listdir(base)} if os.path.isdir(base) else set()
    result = subprocess.run(
        ["git", "ls-files", "--others", "--directory", "--", folder], cwd=ROOT, capture_output=True, text=True)
    return set(result.stdout.splitlines()) if result.returncode == 0 else set()


def clean(models_before):
    """Removes what blocks leave: `out/`, and what appeared untracked in Models/ since the start."""
    shutil.rmtree(os.path.join(WORK, "out"), ignore_errors=True)
    for path in sorted(untracked("Models") - models_before):
        full = os.path.join(WORK, path)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        elif os.path.lexists(full):
            os.remove(full)


def run_python(body, binary_folder):
    """Runs a Python block against `netrunner serve` on port 8080; a problem, or None."""
    python = os.path.join(ROOT, ".venv-test", "bin", "python")
    if not os.access(python, os.X_OK):
        return "no .venv-test (run scripts/setup-test-python.sh)"
    expected = body[-1].lstrip("# ").strip() if body and body[-1].startswith("#") else None
    server = subprocess.Popen(
        [os.path.join(binary_folder, "netrunner"), "serve", "--port", "8080"], cwd=WORK,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ready = subprocess.run(
            ["curl", "--silent", "--retry", "60", "--retry-connrefused", "--retry-delay", "1", "--fail",
             "http://127.0.0.1:8080/v2/health/ready"], capture_output=True, timeout=120)
        if ready.returncode != 0:
            return "netrunner serve did not become ready on 127.0.0.1:8080"
        result = subprocess.run([python, "-c", "\n".join(body)], cwd=WORK, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            return f"the Python block exited {result.returncode}: {result.stderr.strip()[-800:]}"
        if expected is not None and result.stdout.strip() != expected:
            return f"the Python block printed {result.stdout.strip()!r}, the guide shows {expected!r}"
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


def runnable(files):
    """Every block to run: (file, line number, kind, body)."""
    found = []
    for name in files:
        with open(os.path.join(ROOT, name), encoding="utf-8") as handle:
            text = handle.read()
        for number, language, body, before in blocks(text):
            if NOT_RUN in before or (INSTALLED and CLONE_ONLY in before):
                continue
            if language == "sh":
                found.append((name, number, "sh", body))
            elif language == "python" and WITH_SERVER in before:
                found.append((name, number, "python", body))
            elif language == "" and body and body[0].startswith("$ "):
                found.append((name, number, "transcript", body))
    return found


def check(block, folder):
    """Runs one block; (commands run, failures)."""
    name, number, kind, body = block
    where = f"{name}:{number}"
    if kind == "sh":
        result = run("set -e\n" + "\n".join(body) + "\n", folder)
        commands = sum(1 for line in body if line.strip() and not line.lstrip().startswith("#"))
        if result.returncode != 0:
            return commands, [f"{where}: the block exited {result.returncode}: "
                              + (result.stderr.strip() or result.stdout.strip())[-800:]]
        return commands, []
    if kind == "python":
        failure = run_python(body, folder)
        return 1, [f"{where}: {failure}"] if failure else []
    failures = []
    commands = 0
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
            failures.append(f"{where}: `{command}` exited {result.returncode}: {result.stderr.strip()[-600:]}")
            break
        if not matches(expected, output):
            failures.append(
                f"{where}: `{command}` printed what the guide does not show:\n  guide:\n    "
                + "\n    ".join(expected) + "\n  printed:\n    " + "\n    ".join(output))
    return commands, failures


def main():
    parser = argparse.ArgumentParser(description="Runs the examples of README.md and docs/*.md.")
    parser.add_argument("netrunner", nargs="?", help="the netrunner binary to put on the PATH")
    parser.add_argument(
        "--installed", metavar="PREFIX", help="run as a user of PREFIX/bin/netrunner, from a folder outside the clone")
    parser.add_argument("--seed", type=int, help="the order's seed, to replay a run (default: a new one)")
    parser.add_argument("--only", action="append", metavar="FILE", help="run only this file's blocks (repeatable)")
    arguments = parser.parse_args()
    global WORK, INSTALLED
    if bool(arguments.installed) == bool(arguments.netrunner):
        print("run-readme: give the netrunner binary, or --installed PREFIX", file=sys.stderr)
        return 2
    binary = os.path.abspath(arguments.netrunner or os.path.join(arguments.installed, "bin", "netrunner"))
    folder = os.path.dirname(binary)
    if os.path.basename(binary) != "netrunner" or not os.access(binary, os.X_OK):
        print(f"run-readme: {binary} is not an executable named netrunner", file=sys.stderr)
        return 2
    if arguments.installed:
        INSTALLED = True
        WORK = tempfile.mkdtemp(prefix="netrunner-installed-")
        for name in INSTALLED_DATA:
            source, target = os.path.join(ROOT, name), os.path.join(WORK, name)
            if os.path.isdir(source):
                shutil.copytree(source, target, symlinks=True)
            else:
                shutil.copy2(source, target)
        print(f"run-readme: {binary} from {WORK} (a copy of the data the blocks read, no sources)", flush=True)
    files = documents()
    if arguments.only:
        wanted = {os.path.normpath(name) for name in arguments.only}
        files = [name for name in files if name in wanted]
    seed = arguments.seed if arguments.seed is not None else random.SystemRandom().randrange(1, 1_000_000)
    print(f"run-readme: seed {seed} (replay this order with --seed {seed})", flush=True)
    order = runnable(files)
    random.Random(seed).shuffle(order)
    models_before = untracked("Models")
    failures = []
    commands = 0
    try:
        for block in order:
            clean(models_before)
            ran, failed = check(block, folder)
            commands += ran
            failures += failed
    finally:
        clean(models_before)
        shutil.rmtree(INSTALL_PREFIX, ignore_errors=True)
        if WORK != ROOT:
            shutil.rmtree(WORK, ignore_errors=True)
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"run-readme: {commands} commands in {len(order)} blocks from {len(files)} files, {len(failures)} failed"
          f" (seed {seed})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
