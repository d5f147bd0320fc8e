#!/bin/sh
# What the decoder children's seccomp sandbox costs per photo and per child (issue 54): runs
# DecoderSandboxBenchmarkTests (sandboxed children against children started with
# NETRUNNER_DECODER_FAULT=skip-sandbox) on a small HEIC, a 480x320 one, a grid, an AVIF and a
# 12 MP HEIC made here (a 4032x3024 grid over the 4096x4096 HEVC tile of
# Tests/Fixtures/Hostile/heic_grid_lying_ispe.heic); first, the filter's cost per system call
# (decoder_sandbox_syscalls.c). Run from the repository root after
# `swift build --build-tests`, with the test venv (scripts/setup-test-python.sh); add
# `-c release` to both for release figures:
#
#     tools/trial/decoder_sandbox_bench.sh [swift test options]
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -I Sources/CImageCodecs/include -I Sources/CImageCodecs tools/trial/decoder_sandbox_syscalls.c \
    Sources/CImageCodecs/decoder_sandbox.c -o "$out/syscalls"
"$out/syscalls"
"${PYTHON:-.venv-test/bin/python3}" - "$out/heic_12mp.heic" <<'PY'
import struct, sys
sys.path.insert(0, "tools/images")
from make_hostile_fixtures import children, grid_file
data = open("Tests/Fixtures/Hostile/heic_grid_lying_ispe.heic", "rb").read()
top = {kind: (s, e) for kind, s, e in children(data, 0, len(data))}
config = data[data.index(b"hvcC") - 4:]
config = config[:struct.unpack(">I", config[:4])[0]]
coded = data[slice(*top[b"mdat"])]
open(sys.argv[1], "wb").write(
    grid_file(b"heic", b"hvc1", config, coded, (4096, 4096), 1, 1, (4032, 3024), (4032, 3024)))
PY
files="$PWD/Tests/Fixtures/Formats/heic_plain.heic:$PWD/Tests/Fixtures/Thumbnails/heic_thumbnail.heic"
files="$files:$PWD/Tests/Fixtures/Grids/heic_grid.heic:$PWD/Tests/Fixtures/Formats/avif_plain.avif:$out/heic_12mp.heic"
NETRUNNER_IMAGE_BENCH=1 NETRUNNER_SANDBOX_BENCH_FILES="$files" NETRUNNER_CACHE_DIR=$PWD/.build/netrunner-cache \
    swift test --skip-build "$@" --filter DecoderSandboxBenchmarkTests 2>&1 | grep -E "ms sandboxed|✘|error"
