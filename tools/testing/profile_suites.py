#!/usr/bin/env python3
"""Where make test's processor time goes: CPU-seconds per top-level test suite.

Runs the built test binary once per top-level suite (module.Suite), each in a process of its own
with make test's environment and parallelism, and reads the processor time it and every child it
waited for took (getrusage RUSAGE_CHILDREN before and after: the servers, browsers, Python checks
and decoder children a suite starts count to it; a daemon that outlives it, such as the test
PostgreSQL, does not). Prints the suites by CPU-seconds, most first, with their wall time and
their share of the total, and writes the same as JSON with --json PATH.

    swift build --build-tests && python3 tools/testing/profile_suites.py --most 40
    python3 tools/testing/profile_suites.py --match netrunnerTests   # one module's suites

Wall times here are of one suite alone on an idle machine: make test runs the suites at once
(--experimental-maximum-parallelization-width 8), so its wall time is about the sum of the CPU
column over the cores, not the sum of this one's walls. A suite that fails still counts; its
status is printed beside it.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def shell(command):
    return subprocess.run(command, shell=True, check=True, capture_output=True, text=True, cwd=ROOT).stdout.strip()


def test_environment():
    """make test's environment (the Makefile's TEST_ENV and the test recipe's variables)."""
    environment = dict(os.environ)
    environment.update(
        NETRUNNER_CACHE_DIR=os.path.join(ROOT, ".build", "netrunner-cache"),
        NETRUNNER_TEST_REFERENCE=shell("scripts/record-local-reference.sh"),
        NETRUNNER_TEST_REQUIRE_GPU="1",
        NETRUNNER_FUZZ_SHARE="0.25",
        NETRUNNER_TEST_POSTGRES=shell("scripts/start-test-postgres.sh"),
        NO_COLOR="1",
    )
    return environment


def suites(binary, environment):
    """The top-level suites (module.Suite), in the binary's order, from --list-tests."""
    listed = subprocess.run(
        [binary, "--testing-library", "swift-testing", "--list-tests"],
        check=True, capture_output=True, text=True, env=environment, cwd=ROOT,
    ).stdout.split("\n")
    seen = []
    for line in listed:
        line = line.strip()
        # A test's ID: Module.Suite/Nested/function(label:) (a free function: Module/function()).
        match = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\.([^/\s]+)/", line) or re.match(r"^([A-Za-z_][A-Za-z0-9_]*)/", line)
        if not match:
            continue
        suite = match.group(0).rstrip("/")
        if suite not in seen:
            seen.append(suite)
    return seen


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=None, help="the test binary (default: the debug build's)")
    parser.add_argument("--width", type=int, default=8, help="tests at a time within a suite, as make test (8)")
    parser.add_argument("--match", default="", help="only suites whose name contains this")
    parser.add_argument("--most", type=int, default=30, help="rows printed (30)")
    parser.add_argument("--json", default=None, help="write every suite's figures here")
    arguments = parser.parse_args()
    binary = arguments.binary or os.path.join(shell("swift build --show-bin-path"), "NetRunnerPackageTests.xctest")
    environment = test_environment()
    rows = []
    for suite in suites(binary, environment):
        if arguments.match not in suite:
            continue
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        status = subprocess.run(
            [binary, "--testing-library", "swift-testing", "--filter", "^" + re.escape(suite) + "[/.]",
             "--experimental-maximum-parallelization-width", str(arguments.width)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment, cwd=ROOT,
        ).returncode
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        rows.append({"suite": suite, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "status": status})
        print(f"{cpu:8.1f} CPU-s {wall:7.1f} s  {suite}{'' if status == 0 else f'  (exit {status})'}",
              file=sys.stderr, flush=True)
    total = sum(row["cpu_s"] for row in rows) or 1
    print(f"{len(rows)} suites, {total:.0f} CPU-seconds in all, {sum(row['wall_s'] for row in rows):.0f} s of wall one by one")
    for row in sorted(rows, key=lambda row: -row["cpu_s"])[: arguments.most]:
        failed = "" if row["status"] == 0 else f"  (exit {row['status']})"
        print(f"{row['cpu_s']:8.1f} CPU-s {100 * row['cpu_s'] / total:5.1f}% {row['wall_s']:7.1f} s  {row['suite']}{failed}")
    if arguments.json:
        with open(arguments.json, "w") as file:
            json.dump(rows, file, indent=1)


if __name__ == "__main__":
    main()
