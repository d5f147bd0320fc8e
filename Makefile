# NetRunner: the two commands of the README, and the pieces they are made of.
#
#   make run     set up, build, classify real photos with the embedded model, find faces, run the sample test bundles
#   make test    set up, build, and run every test (CI also runs make test-asan, make lint and
#                make test-fresh)
#   make bench   the side-by-side benchmarks (ours vs Python ai_edge_litert, one run)
#   make package the Debian package netrunner_<version>_amd64.deb (docs/install.md)

SWIFT ?= swift
# Every build here compiles the image codecs' C with -O2, debug builds too (Package.swift's
# optimizedC): one setting for all of make's builds, so that none rebuilds what another built.
NETRUNNER_OPTIMIZE_C ?= 1
export NETRUNNER_OPTIMIZE_C
# The commit every build here is of, for --version (0.2.0 (62e46ba)): Package.swift makes it a
# define of one C file (CBuildInfo), so a new commit recompiles that file and relinks, no more.
# Empty without .git here (a tarball, even one unpacked inside another clone): "unknown".
ifndef NETRUNNER_COMMIT
NETRUNNER_COMMIT := $(shell test -e .git && git rev-parse --short=7 HEAD 2>/dev/null)
endif
export NETRUNNER_COMMIT
PHOTOS ?= Tests/Fixtures/Photos/test

.PHONY: run test test-fresh test-readme test-slurm test-cluster test-package debug-tools test-asan asan-build asan-run test-python gpu-packages setup runtime system build-core build install package bench bench-setup bench-decode bench-gpu bench-tasks trial format lint clean

PREFIX ?= $(HOME)/.local

system:
	scripts/install-system-packages.sh

runtime:
	scripts/install-runtime.sh

setup: system runtime

# CONFIG=debug installs the debug build instead (the README check does, so that `make test` never
# builds the release binary: ten minutes on two cores).
CONFIG ?= release

# `netrunner` alone: every command that runs a model, without the HTTP stacks (about 1.5 minutes
# of release build on two cores, where both executables take about 7).
build-core: setup
	$(SWIFT) build -c $(CONFIG) --product netrunner

# Both executables: `netrunner` and `netrunner-net` (serve, hub, import), which `netrunner`
# hands those commands to, git-style.
build: build-core
	$(SWIFT) build -c $(CONFIG) --product netrunner-net

# The tool by name, laid out as the Debian package lays it out (scripts/build-package.sh
# --install): both executables with the Swift runtime linked in, in $(PREFIX)/bin (default
# ~/.local/bin); the LiteRT runtime in $(PREFIX)/lib/netrunner; the bundled models in
# $(PREFIX)/share/netrunner/models (their ids work from any folder); man pages and completions.
# Nothing of it needs the clone or the toolchain afterwards.
install: build
	$(SWIFT) build -c $(CONFIG) --product generate-manual
	scripts/build-package.sh --config $(CONFIG) --install "$(PREFIX)"

# The Debian package (docs/install.md): both executables linked again from the build's objects
# with the Swift runtime static, stripped, the LiteRT runtime in /usr/lib/netrunner, the systemd
# units, man pages and completions (scripts/build-package.sh). netrunner_<version>_amd64.deb in
# the repository root, xz; CONFIG=debug (make test's package test) in .build/package, gzip -1.
PACKAGE_OUTPUT ?= $(if $(filter debug,$(CONFIG)),.build/package,.)
PACKAGE_COMPRESSION ?= $(if $(filter debug,$(CONFIG)),fast,xz)
package: build
	$(SWIFT) build -c $(CONFIG) --product generate-manual
	scripts/build-package.sh --config $(CONFIG) --output $(PACKAGE_OUTPUT) --compression $(PACKAGE_COMPRESSION)

run: build-core
	.build/release/netrunner classify $(PHOTOS)
	.build/release/netrunner detect Tests/Fixtures/Photos/faces Tests/Fixtures/Photos/test/grace_hopper.jpg --annotate out/annotated
	.build/release/netrunner evaluate TestBundles/imagenet-sample.testbundle TestBundles/faces.testbundle --output out/evaluation --restart

# How many tests make test runs at a time (see the test recipe).
TEST_WIDTH ?= 8

# Model-check verdicts (ModelGate) of the tests go to a cache inside the build folder, not the user's.
# The Python reference the bit-for-bit tests compare with is recorded on this machine's CPU.
# (The children the tests crash on purpose, model checks and decoder processes, run with Swift's
# crash backtracer off, set by the library: a backtracer stuck on one outlived a run by 20 minutes.)
TEST_ENV = NETRUNNER_CACHE_DIR=$(CURDIR)/.build/netrunner-cache NETRUNNER_TEST_REFERENCE=$$(scripts/record-local-reference.sh)

# The Python the server tests drive it with (the real Triton client, selenium), pinned; and
# the Debian packages of the browser test (chromium, chromium-driver) and of the camera clip (ffmpeg).
test-python:
	scripts/setup-test-python.sh
	scripts/setup-stats-python.sh
	scripts/install-test-packages.sh

# The Vulkan loader and lavapipe (software Vulkan, from bookworm-backports): the GPU tests run
# LiteRT's real GPU accelerator on them.
gpu-packages:
	scripts/install-gpu-packages.sh

test: setup test-python gpu-packages
	@# The debug build prints no warning (CI fails on one; make test-fresh checks the release build).
	@mkdir -p .build
	{ $(SWIFT) build --build-tests 2>&1; echo $$? >.build/build-tests.status; } | tee .build/build-tests.log; exit $$(cat .build/build-tests.status)
	@# (Of this package's files: SwiftPM prints the dependencies' manifest warnings too.)
	@! grep -E '^$(CURDIR)/[^:]*:[0-9]+:[0-9]+: warning: ' .build/build-tests.log || { echo "make test: the build printed warnings (above)"; exit 1; }
	@# The hub's PostgreSQL tests use a private Debian postgresql on 127.0.0.1:55432.
	@# NETRUNNER_TEST_REQUIRE_GPU: lavapipe is installed, so a GPU test that finds no GPU fails instead of skipping.
	@# On failure, the failed tests and their issues again from the XML results (swift test's own
	@# console lines have gone missing under load: a CI run counted 3 issues and printed none).
	@# The test binary is run as swift test runs it, with at most $(TEST_WIDTH) tests at a time
	@# (swift test offers no such limit for Swift Testing): unbounded, every test started at once,
	@# 100-odd servers, browsers and decoder children shared 2 cores, and a CI run saw good
	@# requests wait 125 s. At 8 the whole run took 359 s against 402.
	@# NETRUNNER_FUZZ_SHARE: the decoder fuzzer tries the first quarter of its mutants here;
	@# make test-asan tries every one under AddressSanitizer, which finds what this run would.
	rm -rf .build/test-results && mkdir -p .build/test-results
	$(TEST_ENV) NETRUNNER_TEST_REQUIRE_GPU=1 NETRUNNER_FUZZ_SHARE=0.25 NETRUNNER_TEST_POSTGRES=$$(scripts/start-test-postgres.sh) \
		NO_COLOR=1 $$($(SWIFT) build --show-bin-path)/NetRunnerPackageTests.xctest --testing-library swift-testing \
		--experimental-maximum-parallelization-width $(TEST_WIDTH) \
		--xunit-output .build/test-results/results-swift-testing.xml \
		|| { python3 scripts/test-failures.py .build/test-results; exit 1; }
	@# (.ci/run starts the sanitized tests beside the end-to-end checks once this file is there.)
	@touch .build/test-results/unit-tests-passed
	@# The four end-to-end checks below at once, each on files of its own (out/ and Models/ are the
	@# README's; Slurm, the cluster and the package work in temporary folders): mostly waiting on
	@# processes, they take minutes less together than one after another. Each one's output comes
	@# whole.
	$(MAKE) --no-print-directory -j4 --output-sync=target E2E_PREBUILT=1 test-readme test-slurm test-cluster test-package

# The debug build of both tools that the end-to-end checks below run, when one is run alone
# (make test has built them with the tests and passes E2E_PREBUILT=1).
debug-tools: setup
	$(if $(E2E_PREBUILT),@true,$(SWIFT) build --product netrunner && $(SWIFT) build --product netrunner-net)

# README.md and docs/*.md, pasted: every sh block run in a random order, each on its own, every
# transcript's output compared; as a user of an installed copy runs them: `make install` of the
# debug build into .build/installed (the README's install block), then every other block with
# that copy alone on the PATH (no toolchain, no LD_LIBRARY_PATH), from a folder outside the clone
# holding a copy of the data they read. (`scripts/run-readme.py .build/debug/netrunner` runs them
# in the clone instead.)
test-readme: debug-tools test-python
	$(MAKE) --no-print-directory install PREFIX=$(CURDIR)/.build/installed CONFIG=debug
	$(TEST_ENV) python3 scripts/run-readme.py --installed $(CURDIR)/.build/installed

# deploy/slurm/ as shipped on a real one-node Slurm (Debian's slurm-wlm, installed if missing) on
# loopback: skipped without root.
test-slurm: debug-tools
	NETRUNNER_CACHE_DIR=$(CURDIR)/.build/netrunner-cache scripts/test-slurm.sh .build/debug/netrunner

# deploy/slurm/ across hosts: a controller and three compute nodes in network namespaces, an
# array spread over them, a node killed mid-array, serve behind nginx (Debian's slurm-wlm and
# nginx installed if missing): skipped without root or namespaces.
test-cluster: debug-tools
	NETRUNNER_CACHE_DIR=$(CURDIR)/.build/netrunner-cache scripts/test-cluster.sh .build/debug/netrunner

# The Debian package of the debug build (make package CONFIG=debug) installed by apt in a clean
# Debian bookworm root (mmdebstrap, cached a week in ~/.cache/netrunner), run there: skipped
# without root.
test-package: debug-tools
	scripts/test-package.sh

# The README's two commands on a machine like a new user's: a clean Debian bookworm root with only
# swift.org's Debian 12 packages, python3, pip, venv and make, the toolchain mounted read-only, a
# fresh clone of the commit; make run whole (its answers checked against the README) and make
# test's set-up in it (scripts/test-fresh.sh; the root cached a week). Skipped without root.
test-fresh:
	scripts/test-fresh.sh

# The unit tests of the modules below the servers (TensorFlowLite, NetRunnerImage, NetRunner,
# NetRunnerEvaluation, NetRunnerVideo, NetRunnerSupport: where the C shims and the unsafe
# pointers are) again under AddressSanitizer. Package.swift leaves the HTTP stacks, the hub and
# the command line out when NETRUNNER_UNITS_ONLY=1; the tests that run the tool as a child (the
# model gate's checker and the decoder processes among them) run the plain build's. Leak reports are off: the only leaks
# found are XCTest's and Foundation.Process's; the out-of-memory tests need allocations that fail
# instead of aborting.
# The GPU tests run once, in make test (NETRUNNER_TEST_GPU=off: lavapipe's shader compiler through
# the sanitizer's allocator made them the run's longest, 79 of 90 s).
ASAN_ENV = NETRUNNER_UNITS_ONLY=1 NETRUNNER_TEST_TOOL=$(CURDIR)/.build/debug/netrunner NETRUNNER_CHECKER=$(CURDIR)/.build/debug/netrunner NETRUNNER_DECODER=$(CURDIR)/.build/debug/netrunner NETRUNNER_TEST_GPU=off
# The job queue's and the evaluation's tests are left out there: plain Swift over files and JSON
# (two unsafe-pointer uses each, both in tests that run in make test), all but the fuzzing of the
# results-line reader (EmbeddingLineScan walks raw bytes through an unsafe buffer).
test-asan: setup test-python asan-build
	$(SWIFT) build --product netrunner
	$(SWIFT) build --product netrunner-net
	$(MAKE) --no-print-directory asan-run

# The sanitized tests alone, both builds current (.ci/run, after make test and asan-build).
asan-run:
	$(TEST_ENV) $(ASAN_ENV) ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=0 $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan --skip '^(NetRunnerJobsTests\.(?!ResultsLineFuzzTests)|NetRunnerEvaluationTests\.)'

# The sanitized build alone, nothing set up first (.ci/run builds it in the background, at the
# lowest priority, while make test runs).
asan-build:
	$(ASAN_ENV) $(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan

bench-setup: setup
	Benchmarks/setup.sh

bench: bench-setup build
	$(SWIFT) build -c release --package-path Benchmarks
	Benchmarks/.build/release/InterpreterBenchmark
	NETRUNNER_CHECKER=$(CURDIR)/.build/release/netrunner Benchmarks/.build/release/PipelineBenchmark
	@# netrunner serve against FastAPI + uvicorn under wrk (Benchmarks/setup.sh installs wrk).
	.venv-bench/bin/python Benchmarks/serve_benchmark.py --netrunner .build/release/netrunner
	@# The hub's downloads against nginx serving the same file, and wrk on list and the update check.
	python3 Benchmarks/hub_benchmark.py --netrunner .build/release/netrunner
	@# netrunner stream (video mode) against MediaPipe's FaceDetector in VIDEO mode, same clip and model.
	python3 Benchmarks/stream_benchmark.py --netrunner .build/release/netrunner
	@# serve behind nginx with 1, 2, 3 workers, a worker killed under load, bulk images/s per core.
	python3 Benchmarks/scale_benchmark.py --netrunner .build/release/netrunner
	@# Equal cores: bulk (exact and --fast-decoding) against a multiprocessing.Pool of Pillow +
	@# ai_edge_litert (plain and draft), the invoke-only limit, 0.2-2 MP, 1-12 MP and phone-like
	@# photos; the same photos saved five ways against libjpeg-turbo's tjbench and djpeg; the
	@# other formats.
	$(MAKE) bench-decode
	$(MAKE) bench-tasks
	$(MAKE) bench-gpu

# NetRunner on the CPU and the GPU against Python's CompiledModel on the GPU (lavapipe where
# there is no GPU: the code path, not a GPU's speed).
bench-gpu: bench-setup build gpu-packages
	.venv-bench/bin/python Benchmarks/gpu_benchmark.py --netrunner .build/release/netrunner
	@# serve --accelerator gpu against --accelerator cpu under wrk, at 1, 8 and 64 connections.
	.venv-bench/bin/python Benchmarks/serve_gpu_benchmark.py --netrunner .build/release/netrunner

bench-decode: bench-setup build
	.venv-bench/bin/python Benchmarks/decode_benchmark.py --netrunner .build/release/netrunner

# Pose (MoveNet) and segmentation (DeepLab) through bulk against a multiprocessing.Pool of
# Pillow + ai_edge_litert doing the same pre- and post-processing, equal workers.
bench-tasks: bench-setup build
	.venv-bench/bin/python Benchmarks/task_benchmark.py --netrunner .build/release/netrunner

# Issue 22's hostile trial replayed against serve and hub serve (74 cases, about 40 s), then the
# later rounds' (round six: issue 54's crafted files, made by tools/trial/'s makers, Pillow with AVIF
# from .venv-test); the fixes' own tests are in make test.
trial: setup test-python
	$(SWIFT) build --product netrunner
	$(SWIFT) build --product netrunner-net
	python3 tools/trial/hostile_trial.py --netrunner .build/debug/netrunner

format:
	$(SWIFT) format format --in-place --recursive Package.swift Sources Tests Benchmarks/Sources Benchmarks/Package.swift

lint:
	@command -v node >/dev/null || scripts/install-test-packages.sh
	@# The scripts of serve's page, the hub's page and the results gallery, parsed (a syntax error fails here, not in a user's browser).
	node --check Sources/NetRunnerServer/Resources/app.js
	node --check Sources/NetRunnerServer/Resources/tasks.js
	node --check Sources/NetRunnerServer/Resources/album.js
	node --check Sources/NetRunnerServer/Resources/streams.js
	node --check Sources/NetRunnerHubServer/Resources/hub.js
	node --check Sources/NetRunnerHubServer/Resources/hub-gates.js
	node --check Sources/NetRunnerHubServer/Resources/hub-experiments.js
	node --check Sources/NetRunnerEvaluation/Resources/results-gallery.js
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Benchmarks/Sources Benchmarks/Package.swift
	@# Expected outputs that depend on the CPU's kernels come from the record made on this machine
	@# (Fixtures.referenceOutput), never from the committed folder directly: make test passes on any CPU.
	@! grep -rnE 'Fixtures/Reference/[^"]*__out' Tests --include=*.swift || { echo "read recorded outputs with Fixtures.referenceOutput"; exit 1; }
	@# An app using the inference products with traits: [] resolves none of the networked packages.
	scripts/check-library-traits.sh
	@# The library and tool link FoundationEssentials only: full Foundation (ICU) costs start-up time.
	@! grep -rnE '^(public |package |internal )?import Foundation$$' Sources || { echo "Sources must not import Foundation (use FoundationEssentials)"; exit 1; }
	@# The layers of docs/architecture.md: who may import whom, C behind its fences, one public type per file.
	python3 scripts/check-layers.py
	@# No source file over 500 lines (Sources/ and Tests/, fixtures aside): split along its seams.
	python3 scripts/check-file-lengths.py
	@# The swift blocks of README.md and docs/*.md, compiled by the ReadmeSnippetsTests target, must be current.
	python3 scripts/check-readme.py --check
	@# README.md's and the guides' code fences: each closed, and by a line that closes it (a fence
	@# that swallows the section after it renders as code and runs as something else).
	python3 scripts/check-markdown.py

clean:
	rm -rf .build Benchmarks/.build
