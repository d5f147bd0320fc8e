# NetRunner: the two commands of the README, and the pieces they are made of.
#
#   make run     set up, build, and run the main job on the embedded default model
#   make test    set up, build, and run every test
#   make bench   the side-by-side benchmarks (ours vs Python ai_edge_litert, one run)

SWIFT ?= swift
MODEL ?= Models/mobilenet_v2_1.0_224_uint8.tflite

.PHONY: run test setup runtime system build bench bench-setup format lint clean

system:
	scripts/install-system-packages.sh

runtime:
	scripts/install-runtime.sh

setup: system runtime

build: setup
	$(SWIFT) build -c release --product netrunner

run: build
	.build/release/netrunner inspect $(MODEL)
	.build/release/netrunner bench $(MODEL) --threads 2 --runs 50

test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench-setup: setup
	Benchmarks/setup.sh

bench: bench-setup
	$(SWIFT) build -c release --package-path Benchmarks
	Benchmarks/.build/release/InterpreterBenchmark

format:
	$(SWIFT) format format --in-place --recursive Package.swift Sources Tests Benchmarks/Sources Benchmarks/Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Benchmarks/Sources Benchmarks/Package.swift

clean:
	rm -rf .build Benchmarks/.build
