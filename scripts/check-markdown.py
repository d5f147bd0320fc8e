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
```` around ``` lines.

It also checks that every guide the code cites exists: each `docs/NAME.md` (and
`docs/NAME.md#anchor`) in a Swift file under Sources/ (help texts, hence the man pages, and
comments) must name a file of docs/, and its anchor a heading of that file (GitHub's slugs).

Prints each problem as FILE:LINE: ..., exits 1 if there is any.

Usage: scripts/check-markdown.py [FILE.md...]   (default: README.md and docs/*.md, and the
       guides cited in Sources/)
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


DOC_LINK = re.compile(r"docs/([A-Za-z0-9_./-]+?\.md)(?:#([A-Za-z0-9_-]+))?")
HEADING = re.compile(r"^#{1,6}[ \t]+(.*?)[ \t#]*$")


def slugs(text):
    """The anchors GitHub gives a Markdown text's headings (outside fences): lowercased, every
    character but letters, digits, spaces, hyphens and underscores dropped, spaces made hyphens,
    a repeated one suffixed -1, -2..."""
    found = set()
    seen = {}
    fence = None
    for line in text.splitlines():
        match = FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) and not match.group(2).strip():
                fence = None
            continue
        heading = HEADING.match(line) if fence is None else None
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        number = seen.get(slug, 0)
        seen[slug] = number + 1
        found.add(slug if number == 0 else f"{slug}-{number}")
    return found


def cited_guides(root):
    """(file, line number, message) for every docs/NAME.md[#anchor] in Sources/ that names no
    guide, or no heading of it."""
    found = []
    anchors = {}
    for path in sorted(glob.glob(os.path.join(root, "Sources", "**", "*.swift"), recursive=True)):
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        for number, line in enumerate(lines, start=1):
            for match in DOC_LINK.finditer(line):
                name, anchor = match.groups()
                guide = os.path.join(root, "docs", name)
                where = os.path.relpath(path, root)
                if not os.path.isfile(guide):
                    found.append((where, number, f"cites docs/{name}, which does not exist"))
                    continue
                if anchor is None:
                    continue
                if guide not in anchors:
                    with open(guide, encoding="utf-8") as handle:
                        anchors[guide] = slugs(handle.read())
                if anchor not in anchors[guide]:
                    found.append((where, number, f"cites docs/{name}#{anchor}, which is no heading of it"))
    return found


def self_test():
    """The checker on a text with each problem and on one without: it must tell them apart."""
    broken = "Text.\n\n```sh\nnetrunner evaluate x\n``` `ImageTask` answers\n\n## Serving\n\n```json\n{}\n```\n"
    assert [line for line, _ in problems(broken)] == [5, 9], problems(broken)
    assert [line for line, _ in problems("```\ncode\n")] == [1], problems("```\ncode\n")
    assert [line for line, _ in problems("``` `x` y\n")] == [1]
    good = "```sh\nls\n```\n\n~~~\n```\n~~~\n\n````\n```json\n```\n````\n\n  ```sh\n  ls\n  ```\n\nA `` ``` `` span.\n"
    assert problems(good) == [], problems(good)
    headings = "# A `netrunner similar`: near-duplicates\n```\n# not a heading\n```\n## One: `--json`\n## One: `--json`\n"
    assert slugs(headings) == {"a-netrunner-similar-near-duplicates", "one---json", "one---json-1"}, slugs(headings)
    assert DOC_LINK.findall("see docs/embeddings.md#what-it-means.") == [("embeddings.md", "what-it-means")]


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
    cited = [] if arguments else cited_guides(ROOT)
    for where, line, message in cited:
        print(f"{where}:{line}: {message}")
    if cited:
        print(f"check-markdown: {len(cited)} guide{'s' if len(cited) != 1 else ''} cited in Sources/ not found")
    return 1 if count or cited else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
