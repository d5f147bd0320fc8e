// swift-tools-version: 6.1
// Side-by-side benchmarks: NetRunner against the reference (Python ai_edge_litert) in one run.
// Not part of the package's public interface; run with `make bench` from the repository root.

import PackageDescription

let package = Package(
    name: "NetRunnerBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "NetRunner", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .executableTarget(
            name: "PipelineBenchmark",
            dependencies: [
                .product(name: "NetRunner", package: "NetRunner"),
                .product(name: "NetRunnerImage", package: "NetRunner"),
                .product(name: "TensorFlowLite", package: "NetRunner"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "InterpreterBenchmark",
            dependencies: [
                .product(name: "TensorFlowLite", package: "NetRunner"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ]
)
