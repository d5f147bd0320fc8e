#!/usr/bin/env python3
"""No source file of the package over 500 lines (make lint; issue 55).

Checks every file git tracks under Sources/ and Tests/ whose name ends in .swift, .c, .h, .cpp,
.js, .css or .html (fixtures and generated data are not code and are left out: Tests/Fixtures).
A file over the limit is split along its seams, as docs/architecture.md describes.
"""
import subprocess
import sys

LIMIT = 500
SUFFIXES = (".swift", ".c", ".h", ".cpp", ".js", ".css", ".html")

files = subprocess.run(
    ["git", "ls-files", "-z", "Sources", "Tests"], check=True, capture_output=True
).stdout.decode().split("\0")
long = []
for path in files:
    if not path.endswith(SUFFIXES) or path.startswith("Tests/Fixtures/"):
        continue
    with open(path, "rb") as file:
        count = file.read().count(b"\n")
    if count > LIMIT:
        long.append((count, path))
for count, path in sorted(long, reverse=True):
    print(f"{path}: {count} lines, more than {LIMIT}")
if long:
    sys.exit(f"check-file-lengths: {len(long)} files over {LIMIT} lines (above)")
print(f"check-file-lengths: every source file is at most {LIMIT} lines")
