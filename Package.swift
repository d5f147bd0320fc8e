// swift-tools-version: 6.1
// NetRunner: TensorFlow Lite vision models from Swift on Linux, on the official LiteRT runtime.

import PackageDescription

/// The language settings of every Swift target: existentials spelled `any`, a member used only
/// where its module is imported, and imports internal unless marked `public` or `package`.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The image codecs' C at -O2 in debug builds too, when make builds (NETRUNNER_OPTIMIZE_C=1).
///
/// At -O0 the AVX2 resize loops were an eighth of the test suite's processor time. Off unless
/// asked, so that the package stays usable as a dependency (SwiftPM refuses unsafe flags there);
/// release builds are -O2 already.
let optimizedC: [CSetting] =
    Context.environment["NETRUNNER_OPTIMIZE_C"] == "1" ? [.unsafeFlags(["-O2"], .when(configuration: .debug))] : []

/// The commit a build is of, for `--version` (`0.2.0 (62e46ba)`).
///
/// NETRUNNER_COMMIT, which the Makefile sets from git (7 to 40 lowercase hex digits, else
/// ignored); "unknown" without it (a plain `swift build`, a tarball without .git). A define of the
/// one C file of CBuildInfo, so that a new commit recompiles that file and relinks, and nothing
/// else is built again.
let buildCommit: String = {
    guard let given = Context.environment["NETRUNNER_COMMIT"], (7...40).contains(given.count),
        given.allSatisfy({ "0123456789abcdef".contains($0) })
    else { return "unknown" }
    return given
}()

let package = Package(
    name: "NetRunner",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "TensorFlowLite", targets: ["TensorFlowLite"]),
        .library(name: "NetRunnerImage", targets: ["NetRunnerImage"]),
        .library(name: "NetRunner", targets: ["NetRunner"]),
        .library(name: "NetRunnerEvaluation", targets: ["NetRunnerEvaluation"]),
        .library(name: "NetRunnerHub", targets: ["NetRunnerHub"]),
        .library(name: "NetRunnerVideo", targets: ["NetRunnerVideo"]),
        .executable(name: "netrunner", targets: ["netrunner"]),
        .executable(name: "netrunner-net", targets: ["NetRunnerNet"]),
    ],
    // `Networking` (on by default): the HTTP stacks of serve, the hub and import. An app that
    // only runs models depends with `traits: []`, and SwiftPM then neither fetches nor builds
    // Hummingbird, SwiftNIO, async-http-client or the SQL kits (see the end of this file).
    traits: [
        .trait(name: "Networking", description: "serve, the hub and import: their HTTP and SQL packages"),
        .default(enabledTraits: ["Networking"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The HTTP server of `netrunner serve`, without its Foundation and swift-configuration
        // traits (full Foundation would cost every command ICU's start-up time).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // HTTPTypes' HTTP parts on a NIO pipeline (as Hummingbird's): the request rate floor.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The HTTP client of model downloads (`netrunner import`, the hub client).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // The hub's metadata: one SQL layer (sql-kit) over embedded SQLite (sqlite-kit)...
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit", from: "4.5.2"),
        // ... and PostgreSQL (postgres-kit), for several hub nodes sharing one store.
        .package(url: "https://github.com/vapor/postgres-kit", from: "2.17.0"),
        // ffmpeg as a child process for video (`netrunner stream`), without its Foundation trait.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2", traits: []),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
    ],
    targets: [
        // Our own declarations of the LiteRT C API and the dlopen loader. Nothing else.
        .target(
            name: "CLiteRT",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        // A bounds-checked FlatBuffers reader (TFLite models and their metadata).
        .target(
            name: "NetRunnerFlatBuffers",
            swiftSettings: swiftSettings
        ),
        // The TensorFlowLiteSwift API on top of CLiteRT.
        .target(
            name: "TensorFlowLite",
            dependencies: [
                "CLiteRT",
                "NetRunnerFlatBuffers",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // C shims over libjpeg-turbo and libpng (setjmp/longjmp error handling stays in C).
        .target(
            name: "CImageCodecs",
            cSettings: optimizedC,
            linkerSettings: [
                .linkedLibrary("jpeg"), .linkedLibrary("png16"), .linkedLibrary("webp"), .linkedLibrary("webpdemux"),
                .linkedLibrary("gif"), .linkedLibrary("tiff"), .linkedLibrary("heif"),
            ]
        ),
        // Raw DEFLATE (zlib) for zipped bundles.
        .target(
            name: "CArchive",
            linkerSettings: [.linkedLibrary("z")]
        ),
        // SHA-256 through libcrypto (Debian's libssl-dev).
        .target(
            name: "CDigest",
            linkerSettings: [.linkedLibrary("crypto")]
        ),
        // Our own C API over FAISS's C++ (Debian's libfaiss-dev: a static library, no C API),
        // for the similarity indexes of `similar index --index-type`. Linux only for now.
        .target(
            name: "CFaiss",
            linkerSettings: [
                .linkedLibrary("faiss"), .linkedLibrary("gomp"), .linkedLibrary("blas"), .linkedLibrary("lapack"),
                .linkedLibrary("stdc++"),
            ]
        ),
        // The commit a build is of (buildCommit above), for BuildVersion.
        .target(
            name: "CBuildInfo",
            cSettings: [.define("NETRUNNER_COMMIT", to: "\"\(buildCommit)\"")]
        ),
        // Package-internal helpers several modules share: whole-file I/O (FileIO, FileError),
        // fixed-decimal text, durations in milliseconds. `package` API only; not a product.
        .target(
            name: "NetRunnerSupport",
            dependencies: ["CDigest", "CBuildInfo"],
            swiftSettings: swiftSettings
        ),
        // Pixels: decode/encode, PixelBuffer, orientation, crop, resize, drawing. Knows nothing of models.
        .target(
            name: "NetRunnerImage",
            dependencies: ["CImageCodecs", "NetRunnerSupport"],
            swiftSettings: swiftSettings
        ),
        // Models as users see them: loading and descriptions, preprocessing, the vision tasks,
        // running many images (prefetcher, parallel workers, latency summaries).
        .target(
            name: "NetRunner",
            dependencies: [
                "TensorFlowLite", "NetRunnerImage", "NetRunnerFlatBuffers", "NetRunnerSupport", "CArchive",
                .target(name: "CFaiss", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: swiftSettings
        ),
        // Evaluation: metrics, Net Runner test bundles, bulk results files, JSON and HTML reports.
        .target(
            name: "NetRunnerEvaluation",
            dependencies: ["NetRunner", "NetRunnerImage", "TensorFlowLite", "NetRunnerSupport"],
            // The results gallery's page and script, compiled in (PackageResources).
            resources: [
                .embedInCode("Resources/results-gallery.html"),
                .embedInCode("Resources/results-gallery.js"),
            ],
            swiftSettings: swiftSettings
        ),
        // Frames from video files, URLs, cameras and stdin through an ffmpeg child process, and
        // annotated videos written through another. Knows nothing of models.
        .target(
            name: "NetRunnerVideo",
            dependencies: [
                "NetRunnerImage",
                "NetRunnerSupport",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Hosted models, client side: downloads (resumed, verified, installed atomically), the
        // models folder, Net Runner's import by URL. The only module that imports the HTTP client.
        .target(
            name: "NetRunnerHub",
            dependencies: [
                "NetRunner",
                "NetRunnerImage",
                "NetRunnerSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // `netrunner hub serve`: the self-hosted model hub (versions, aliases with history and
        // rollout, keys with scopes, verified uploads, downloads with ETag and Range) on sql-kit.
        .target(
            name: "NetRunnerHubServer",
            dependencies: [
                "NetRunnerHTTP",
                "NetRunner",
                "NetRunnerHub",
                "NetRunnerSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The hub's page: its HTML, style and script, compiled in (PackageResources).
            resources: [
                .embedInCode("Resources/hub.html"),
                .embedInCode("Resources/hub.css"),
                .embedInCode("Resources/hub.js"),
                .embedInCode("Resources/hub-gates.js"),
                .embedInCode("Resources/hub-experiments.js"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP plumbing both servers share (the only Hummingbird code they do not own):
        // JSON replies and errors, the route table and its 405s, draining on SIGTERM.
        .target(
            name: "NetRunnerHTTP",
            dependencies: [
                "NetRunnerSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The application's jobs, without HTTP or a command line: bulk and evaluation runs,
        // streams, the server's album runs and imports, run by the CLI and the server alike.
        .target(
            name: "NetRunnerJobs",
            dependencies: [
                "NetRunnerEvaluation",
                "NetRunner",
                "NetRunnerImage",
                "NetRunnerVideo",
                "NetRunnerSupport",
            ],
            swiftSettings: swiftSettings
        ),
        // The inference engine under `serve` (worker threads with their own interpreters, a
        // bounded queue), the model catalog every command names models from, the KServe tensor
        // codec. No HTTP.
        .target(
            name: "NetRunnerEngine",
            dependencies: [
                "NetRunner",
                "NetRunnerImage",
                "NetRunnerSupport",
                "TensorFlowLite",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // `netrunner serve`: the native /v1 API, KServe v2 at /v2, the web app, albums, imports
        // and streams, on NetRunnerEngine's engine. Imports Hummingbird, as do NetRunnerHTTP and
        // NetRunnerHubServer.
        .target(
            name: "NetRunnerServer",
            dependencies: [
                "NetRunnerJobs",
                "NetRunnerHTTP",
                "NetRunnerEngine",
                "NetRunner",
                "NetRunnerImage",
                "NetRunnerHub",
                "NetRunnerVideo",
                "NetRunnerSupport",
                "TensorFlowLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The web page's files, compiled into the binary as byte arrays (PackageResources).
            resources: [
                .embedInCode("Resources/index.html"),
                .embedInCode("Resources/app.js"),
                .embedInCode("Resources/tasks.js"),
                .embedInCode("Resources/album.js"),
                .embedInCode("Resources/streams.js"),
                .embedInCode("Resources/app.css"),
                .embedInCode("Resources/favicon.svg"),
            ],
            swiftSettings: swiftSettings
        ),
        // The default model bundles, linked into the executable (.incbin from Models/bundles/).
        .target(
            name: "CEmbeddedModels",
            cSettings: [.headerSearchPath("../../Models/bundles")]
        ),
        // The command line's commands, flags and printing (no job logic), shared by the two
        // executables; it imports no HTTP stack, so `netrunner` builds without one.
        .target(
            name: "NetRunnerCommandLine",
            dependencies: [
                "TensorFlowLite",
                "NetRunner",
                "NetRunnerEvaluation",
                "NetRunnerImage",
                "NetRunnerEngine",
                "NetRunnerJobs",
                "NetRunnerVideo",
                "NetRunnerSupport",
                "CEmbeddedModels",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        // `netrunner`: every command that runs a model (`make run` builds only this).
        .executableTarget(
            name: "netrunner",
            dependencies: ["NetRunnerCommandLine"],
            swiftSettings: swiftSettings
        ),
        // `netrunner-net`: `serve`, `hub` and `import`, which `netrunner` hands over, git-style.
        .executableTarget(
            name: "NetRunnerNet",
            dependencies: [
                "NetRunnerCommandLine",
                "NetRunner",
                "NetRunnerEngine",
                "NetRunnerSupport",
                "NetRunnerVideo",
                "NetRunnerServer",
                "NetRunnerHub",
                "NetRunnerHubServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // Its IOError only: a failed bind told as the address, the port and --port.
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Fixture loaders, reference JSON and tolerance helpers shared by the tests.
        .target(
            name: "NetRunnerTestSupport",
            dependencies: ["TensorFlowLite"],
            path: "Tests/NetRunnerTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CLiteRTTests",
            dependencies: ["CLiteRT", "NetRunnerTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TensorFlowLiteTests",
            dependencies: ["TensorFlowLite", "NetRunnerTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NetRunnerImageTests",
            dependencies: ["NetRunnerImage", "NetRunnerTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NetRunnerTests",
            dependencies: ["NetRunner", "NetRunnerSupport", "NetRunnerTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NetRunnerSupportTests",
            dependencies: ["NetRunnerSupport", "NetRunnerTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NetRunnerJobsTests",
            dependencies: [
                "NetRunnerJobs", "NetRunner", "NetRunnerEvaluation", "NetRunnerImage", "NetRunnerVideo",
                "NetRunnerTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NetRunnerHubServerTests",
            dependencies: [
                "NetRunnerHTTP",
                "NetRunnerHubServer",
                "NetRunnerSupport",
                "NetRunnerTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // An older node's writes, made in the store's own tables (HubGateRoutesTests).
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NetRunnerEngineTests",
            dependencies: ["NetRunnerEngine", "NetRunner", "TensorFlowLite", "NetRunnerTestSupport"],
            swiftSettings: swiftSettings
        ),
        // serve built in process: its routes (native, KServe, albums), access rules, route table, web app.
        .testTarget(
            name: "NetRunnerServerTests",
            dependencies: [
                "NetRunnerHTTP",
                "NetRunnerServer",
                "NetRunnerEngine",
                "NetRunner",
                "NetRunnerImage",
                "NetRunnerTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // The servers' connection handlers (rate floor, caps, budget, 100-continue) on NIO's
        // EmbeddedChannel, its clock moved by hand.
        .testTarget(
            name: "NetRunnerHTTPTests",
            dependencies: [
                "NetRunnerHTTP",
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NetRunnerEvaluationTests",
            dependencies: ["NetRunnerEvaluation", "NetRunner", "NetRunnerTestSupport"],
            swiftSettings: swiftSettings
        ),
        // The hub's client; its ML Kit tests against the hub server in process.
        .testTarget(
            name: "NetRunnerHubTests",
            dependencies: [
                "NetRunnerHub", "NetRunner", "NetRunnerTestSupport", "NetRunnerHubServer",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NetRunnerVideoTests",
            dependencies: ["NetRunnerVideo", "NetRunner", "NetRunnerImage", "NetRunnerTestSupport"],
            swiftSettings: swiftSettings
        ),
        // README.md's swift blocks, extracted by scripts/check-readme.py: compiled, so they cannot rot.
        .testTarget(
            name: "ReadmeSnippetsTests",
            dependencies: ["NetRunner", "NetRunnerHub", "NetRunnerVideo", "TensorFlowLite"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "netrunnerTests",
            dependencies: [
                "netrunner", "NetRunnerNet", "NetRunnerImage", "NetRunnerTestSupport",
                // Both servers in process, on a real socket (LiveServer): the commands' own set-up.
                "NetRunnerServer", "NetRunnerHubServer", "NetRunnerHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    // CFaiss's shim (FAISS's headers need C++11 at least; 17 is what Debian built FAISS with).
    cxxLanguageStandard: .cxx17
)

// `make test-asan` (NETRUNNER_UNITS_ONLY=1): the modules below the servers and their tests, the
// code where the C shims and unsafe pointers live, without the HTTP stacks, the hub and the
// command line (their end-to-end tests run once, in `make test`). Every target that needs one of
// the upper modules, directly or through another, is left out, so new test targets follow.
if Context.environment["NETRUNNER_UNITS_ONLY"] == "1" {
    var upper: Set<String> = [
        "NetRunnerHub", "NetRunnerHTTP", "NetRunnerHubServer", "NetRunnerServer", "netrunner", "NetRunnerNet",
        "NetRunnerCommandLine", "CEmbeddedModels",
    ]
    func names(_ target: Target) -> [String] {
        target.dependencies.compactMap { dependency in
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _): name
            default: nil
            }
        }
    }
    var grew = true
    while grew {
        grew = false
        for target in package.targets
        where !upper.contains(target.name) && names(target).contains(where: upper.contains) {
            upper.insert(target.name)
            grew = true
        }
    }
    package.targets.removeAll { upper.contains($0.name) }
    package.products.removeAll { product in
        product.name == "netrunner" || product.name == "netrunner-net" || upper.contains(product.name)
    }
}

// The packages only the networked modules use, needed only with the `Networking` trait: every
// target's dependency on one of their products is conditional on it, so an app that depends on
// `TensorFlowLite` or `NetRunner` with `traits: []` resolves none of them (checked by
// `scripts/check-library-traits.sh` in make lint).
let networkingPackages: Set<String> = [
    "hummingbird", "hummingbird-websocket", "swift-nio", "swift-http-types", "swift-nio-extras", "swift-prometheus",
    "async-http-client", "sql-kit", "sqlite-kit", "postgres-kit",
]
for target in package.targets {
    target.dependencies = target.dependencies.map { dependency in
        guard case .productItem(let name, let packageName?, let aliases, nil) = dependency,
            networkingPackages.contains(packageName)
        else { return dependency }
        return .productItem(
            name: name, package: packageName, moduleAliases: aliases, condition: .when(traits: ["Networking"]))
    }
}
