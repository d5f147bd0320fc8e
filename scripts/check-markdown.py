#!/usr/bin/env python3
"""Checks the code fences of README.md and every guide in docs/ (run by `make lint`).

A fence that does not close where its writer meant swallows what follows: CommonMark reads a
line like "``` Some text" or "```json" inside an open fence as more code, not as its end, so a
section after it (a heading, prose, the next block) renders as code, and scripts/run-readme.py,
which ends a block at any line starting with ```, runs something else than what readers see.
CommonMark itself finds nothing wrong (an unclosed fence just runs to the end of the file), and
so neither do the maintained linters (pymarkdownlnt's and markdownlint's rules are about blank
lines, languages and style). This checks, per CommonMark's fence rules (a run of 3 or more
backticks or tildes opens one; a run of the same character, at least as long, with nothing
after it closes it):

- inside an open fence, a line that starts with a run of its character at least as long but
  has text after it: it does not close the fence (the fence goes on past it);
- a fence still open at the end of the file;
- outside fences, a line that starts with ``` but is no fence (a backtick after the run).

A fence showing fences (Markdown about Markdown) uses a longer run, as CommonMark intends:
```` around ``` lines. Prints each problem as FILE:LINE: ..., exits 1 if there is any.

Usage: scripts/check-markdown.py [FILE.md...]   (default: README.md and docs/*.md)
"""
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")


def problems(text):
    """(line number, message) of every fence problem in a Markdown text."""
    found = []
    lines = text.splitlines()
    opened = None  # (line number, marker, the line) of the open fence
    for number, line in enumerate(lines, start=1):
        match = FENCE.match(line)
        if opened is None:
            if not match:
                continue
            marker, rest = match.groups()
            if marker[0] == "`" and "`" in rest:
                found.append(
                    (number, f"starts with {marker} but is no fence (a backtick follows the run): "
                     "put the fence on its own line, or the text on the next"))
                continue
            opened = (number, marker, line.strip())
            continue
        start, marker, opening = opened
        if not match or match.group(1)[0] != marker[0] or len(match.group(1)) < len(marker):
            continue
        if match.group(2).strip():
            found.append(
                (number, f"{line.strip()[:60]!r} does not close the fence opened at line {start} "
                 f"({opening[:40]!r}): a closing fence is {marker} alone on its line, so CommonMark "
                 "reads this line and what follows as more code"))
            continue
        opened = None
    if opened is not None:
        start, marker, opening = opened
        found.append((start, f"the fence {opening[:40]!r} is never closed: the rest of the file renders as code"))
    return found


def self_test():
    """The checker on a text with each problem and on one without: it must tell them apart."""
    broken = "Text.\n\n```sh\nnetrunner evaluate x\n``` `ImageTask` answers\n\n## Serving\n\n```json\n{}\n```\n"
    assert [line for line, _ in problems(broken)] == [5, 9], problems(broken)
    assert [line for line, _ in problems("```\ncode\n")] == [1], problems("```\ncode\n")
    assert [line for line, _ in problems("``` `x` y\n")] == [1]
    good = "```sh\nls\n```\n\n~~~\n```\n~~~\n\n````\n```json\n```\n````\n\n  ```sh\n  ls\n  ```\n\nA `` ``` `` span.\n"
    assert problems(good) == [], problems(good)


def main(arguments):
    self_test()
    files = arguments or ["README.md"] + sorted(
        os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    count = 0
    for name in files:
        path = name if os.path.isabs(name) else os.path.join(ROOT, name)
        with open(path, encoding="utf-8") as handle:
            for line, message in problems(handle.read()):
                print(f"{name}:{line}: {message}")
                count += 1
    if count:
        print(f"check-markdown: {count} fence problem{'s' if count != 1 else ''} in {len(files)} files")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
