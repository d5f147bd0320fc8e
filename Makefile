# NetRunner: the two commands of the README, and the pieces they are made of.
#
#   make run     set up, build, and classify real photos with the embedded model (and find faces)
#   make test    set up, build, and run every test
#   make bench   the side-by-side benchmarks (ours vs Python ai_edge_litert, one run)

SWIFT ?= swift
PHOTOS ?= Tests/Fixtures/Photos/test

.PHONY: run test setup runtime system build bench bench-setup format lint clean

system:
	scripts/install-system-packages.sh

runtime:
	scripts/install-runtime.sh

setup: system runtime

build: setup
	$(SWIFT) build -c release --product netrunner

run: build
	.build/release/netrunner classify $(PHOTOS)
	.build/release/netrunner detect Tests/Fixtures/Photos/faces Tests/Fixtures/Photos/test/grace_hopper.jpg --annotate out/annotated

test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench-setup: setup
	Benchmarks/setup.sh

bench: bench-setup build
	$(SWIFT) build -c release --package-path Benchmarks
	Benchmarks/.build/release/InterpreterBenchmark
	Benchmarks/.build/release/PipelineBenchmark

format:
	$(SWIFT) format format --in-place --recursive Package.swift Sources Tests Benchmarks/Sources Benchmarks/Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Benchmarks/Sources Benchmarks/Package.swift

clean:
	rm -rf .build Benchmarks/.build
