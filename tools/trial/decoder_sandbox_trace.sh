#!/bin/sh
# The system calls decoder children make once their sandbox is in place (issue 54), as
# decoder_sandbox.c's allow-list was found: runs DecoderSandboxTests under `strace -f` (apt-get
# install strace) and, for every child, counts each call made after its hello, with the ones the
# filter refused (EPERM, ENOSYS) or that killed it (SIGSYS). Run from the repository root after
# `swift build --build-tests`:
#
#     tools/trial/decoder_sandbox_trace.sh [TEST FILTER]
#
# A call listed as refused that a decode needs is one to add to the allow-list.
set -eu
filter=${1:-DecoderSandboxTests}
out=$(mktemp -d)
trap '[ -n "${KEEP_TRACE:-}" ] || rm -rf "$out"' EXIT
NETRUNNER_CACHE_DIR=$PWD/.build/netrunner-cache strace -f -ff -qq -ttt -o "$out/t" \
    swift test --skip-build --filter "$filter" >"$out/test.log" 2>&1 || { tail -20 "$out/test.log"; exit 1; }
python3 - "$out" <<'PY'
import collections, glob, re, sys
folder = sys.argv[1]
def lines(tid):
    try:
        return open(f"{folder}/t.{tid}", errors="replace").read().splitlines()
    except FileNotFoundError:
        return []
children = [int(f.rsplit(".", 1)[1]) for f in glob.glob(f"{folder}/t.*")
            if "--netrunner-decoder-child" in open(f, errors="replace").read(40000)]
tasks = {}
def walk(tid, root):
    tasks[tid] = root
    for line in lines(tid):
        m = re.match(r"^[\d.]+ clone3?\(.*\) = (\d+)$", line)
        if m:
            walk(int(m.group(1)), root)
for child in children:
    walk(child, child)
hello = {}
for tid, root in tasks.items():
    for line in lines(tid):
        if re.match(r'^[\d.]+ write\(1, "NRD1\\2', line):
            hello[root] = min(hello.get(root, 9e99), float(line.split()[0]))
calls, refused, killed = collections.Counter(), collections.Counter(), 0
for tid, root in tasks.items():
    for line in lines(tid):
        m = re.match(r"^([\d.]+) ([a-z0-9_]+)\(", line)
        if m and root in hello and float(m.group(1)) > hello[root]:
            calls[m.group(2)] += 1
            if re.search(r"= -1 (EPERM|ENOSYS)", line):
                refused[f"{m.group(2)} {line.rsplit('= -1 ', 1)[1].split()[0]}"] += 1
        if "killed by SIGSYS" in line:
            killed += 1
print(f"{len(children)} children, {len(tasks)} processes and threads, {sum(calls.values())} calls after the hello")
for name, count in sorted(calls.items()):
    print(f"  {name:24} {count}")
print("refused:", dict(refused) or "none", "; killed by SIGSYS:", killed)
PY
