#!/usr/bin/env python3
"""The failed tests of a `swift test --xunit-output` run, with their issues, from its XML files.

    python3 scripts/test-failures.py .build/test-results

make test prints these when swift test fails: under load, some of swift test's own console lines
(a test's outcome, an issue's location) have been seen missing from CI logs (3 issues counted,
none printed), and the XML files are written by the test process itself, whole.
"""
import glob
import os
import sys
import xml.etree.ElementTree as ElementTree


def main():
    files = sorted(glob.glob(os.path.join(sys.argv[1], "*.xml")))
    failed = 0
    for path in files:
        try:
            root = ElementTree.parse(path).getroot()
        except (OSError, ElementTree.ParseError) as error:
            print(f"test-failures: cannot read {path}: {error}")
            continue
        for case in root.iter("testcase"):
            problems = [child for child in case if child.tag in ("failure", "error")]
            if not problems:
                continue
            failed += 1
            print(f"FAILED {case.get('classname', '?')}.{case.get('name', '?')}")
            for problem in problems:
                text = (problem.get("message") or "") + ("\n" + problem.text if problem.text else "")
                for line in text.strip().splitlines():
                    print(f"    {line}")
    if not files:
        print(f"test-failures: no XML results in {sys.argv[1]}")
    else:
        print(f"test-failures: {failed} failed test(s) in {', '.join(os.path.basename(f) for f in files)}")


if __name__ == "__main__":
    main()
