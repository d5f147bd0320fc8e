import ArgumentParser
import FoundationEssentials
import Logging
import NetRunner
import NetRunnerCommandLine
import NetRunnerEngine
import NetRunnerHub
import NetRunnerImage
import NetRunnerServer
import NetRunnerSupport
import NetRunnerVideo
import TensorFlowLite

extension NetRunnerNetCommand {
    /// `netrunner serve`: the inference server, for programs (`/v1`, KServe v2 at `/v2`).
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve models over HTTP: a native API at /v1 and KServe v2 (Triton clients) at /v2.",
            discussion: """
                Serves the embedded models and every model in --models (bundles by their model.json id, .tflite \
                files by file name, as evaluate finds them), bound to 127.0.0.1 unless --host says otherwise. \
                Each of --threads workers has its own interpreter per model; requests wait in a bounded queue \
                and get 503 with Retry-After when it is full. /v2/health/ready answers 200 once every model is \
                loaded and warmed up. SIGTERM or Ctrl-C stops taking connections and lets the requests in \
                flight finish.

                  curl --data-binary @Tests/Fixtures/Photos/test/coffee.jpg \\
                    http://127.0.0.1:8080/v1/models/mobilenet-v2-1.0-224-uint8/classify
                """)

        @Option(
            help:
                "A folder of models to serve besides the embedded ones, imports written there (\(ModelsFolder.precedence))."
        )
        var models: String?

        @Flag(
            name: .customLong("installed-models"),
            help:
                "Serve the models installed with NetRunner too (share/netrunner/models: MoveNet, DeepLab and the other MobileNets); every worker holds an interpreter of each model served, about 40 MB a model."
        )
        var servesInstalledModels = false

        @Option(help: "The address to bind: 127.0.0.1 (this machine only), or 0.0.0.0 for every interface.")
        var host = "127.0.0.1"

        @Option(parsing: .unconditional, help: "The port (0: any free port, printed at start).")
        var port = 8080

        @Option(
            name: .shortAndLong, parsing: .unconditional,
            help: "Worker threads, each with one single-threaded interpreter per model (default: every core).")
        var threads: Int?

        @Option(help: AcceleratorHelp.text)
        var accelerator: Accelerator?

        @Option(
            name: .customLong("max-batch"), parsing: .unconditional,
            help:
                "On the GPU, the most images of concurrent requests a classifier runs per invoke (Triton's dynamic batching; default: 8; 1 turns it off)."
        )
        var maxBatchSize: Int?

        @Option(
            name: .customLong("max-queue-delay"), parsing: .unconditional,
            help: "On the GPU, how long the first image of a batch waits for others, in milliseconds (default: 2).")
        var maxQueueDelay: Double?

        @Option(
            name: .customLong("queue"), parsing: .unconditional,
            help: "Requests that may wait (default: 16 per thread).")
        var queueCapacity: Int?

        @Option(
            name: .customLong("max-upload-bytes"), parsing: .unconditional,
            help: "The largest request body, in bytes (33554432 is 32 MiB).")
        var maximumUploadBytes = 32 << 20

        @Option(
            name: .customLong("api-key"),
            help:
                "Require this key (Authorization: Bearer KEY) for everything but health, metadata, the model list and the page; repeatable. The page: /#key=KEY."
        )
        var apiKeys: [String] = []

        @Option(name: .customLong("api-keys-file"), help: "Require one of the keys in this file (one per line).")
        var apiKeysFile: String?

        @Option(
            name: .customLong("cors-origin"),
            help:
                "Let pages from this origin (https://app.example.com, or *) call the server; repeatable. Requests from other pages are refused (403)."
        )
        var corsOrigins: [String] = []

        @OptionGroup var connections: ConnectionOptions

        @Option(
            name: .customLong("albums"),
            help: "A folder of photos the page offers as an album (bulk inference, results one by one); repeatable.")
        var albums: [String] = []

        @Option(
            name: .customLong("index"),
            help: ArgumentHelp(
                "A similarity index (from `netrunner similar index`, NetRunner's or FAISS's) searched with a photo at POST /v1/indexes/NAME/search: NAME=FILE; the model it names is served with it (an id, an installed model, or a path); a new version of the file is served once written (--index-poll); repeatable.",
                valueName: "name=file"))
        var indexes: [String] = []

        @Option(
            name: .customLong("index-poll"),
            help: ArgumentHelp(
                "How often, in seconds, the --index files are looked at for a new version, which then replaces the old with no pause (0: never).",
                valueName: "seconds"))
        var indexPoll = 2.0

        @Option(
            name: .customLong("stream"),
            help: ArgumentHelp(
                "A video source the server reads and the page previews live with the answers drawn: [NAME=]SOURCE, a camera (/dev/video0), a live URL, or a file played at its own rate in a loop; repeatable.",
                valueName: "name=source"))
        var streams: [String] = []

        @Option(
            name: .customLong("stream-model"),
            help: "The model the streams run (default: the first detector served, else the first model).")
        var streamModel: String?

        @Option(
            name: .customLong("stream-interval"), parsing: .unconditional,
            help: "Milliseconds between two inferences of one stream (live mode).")
        var streamInterval = 200

        @Flag(
            name: .customLong("import"), inversion: .prefixedNo,
            help: "Let the page and POST /v1/imports import models by URL into the models folder.")
        var allowsImport = true

        @Flag(
            name: .customLong("allow-private-imports"),
            help: "Let imports download from loopback, private and link-local addresses (refused by default).")
        var allowsPrivateImports = false

        @Flag(
            name: .customLong("decode-in-process"),
            help:
                "Decode HEIC and AVIF in the server's own process (as NETRUNNER_DECODE_IN_PROCESS=1 does): faster, but a decoder crash ends the server (libheif 1.19 aborts or corrupts its heap on some hostile files). By default they decode in child processes (one per worker thread), so that a crash in libheif costs one request a 400, not the server."
        )
        var decodesInProcess = false

        @Option(
            name: .customLong("decoder-memory"), parsing: .unconditional,
            help: "Each decoder process's address-space limit, in MiB (room for a 100-megapixel HEIC).")
        var decoderMemory = DecoderIsolation.Configuration.defaultMemoryLimit >> 20

        @OptionGroup var modelMemory: ModelMemoryOption

        @Flag(help: "Log every request and the runtime's own lines.")
        var verbose = false

        func validate() throws {
            try OptionLimits.check(port, "--port", in: 0...65_535)
            if let threads { try OptionLimits.checkThreads(threads) }
            if let queueCapacity { try OptionLimits.check(queueCapacity, "--queue", in: 1...100_000) }
            if let maxBatchSize { try OptionLimits.check(maxBatchSize, "--max-batch", in: 1...256) }
            if let maxQueueDelay { try OptionLimits.check(maxQueueDelay, "--max-queue-delay", in: 0...1000) }
            try OptionLimits.check(indexPoll, "--index-poll", in: 0...86_400)
            for album in albums where !ImageArguments.isDirectory(album) {
                throw ValidationError("--albums \(album) is not a folder.")
            }
            try OptionLimits.check(maximumUploadBytes, "--max-upload-bytes", in: 1024...(1 << 30))
            try OptionLimits.check(streamInterval, "--stream-interval", in: 0...3_600_000)
            try OptionLimits.check(decoderMemory, "--decoder-memory", in: 256...1_048_576)
            for key in apiKeys where !InferenceServer.isUsableKey(key) {
                throw ValidationError("--api-key cannot be empty or hold spaces or control characters: \"\(key)\".")
            }
            let names = namedStreams().map(\.name)
            if Set(names).count != names.count { throw ValidationError("--stream names must differ.") }
            for (_, source) in namedStreams() {
                do {
                    try VideoSource(source).check()
                } catch {
                    throw ValidationError("--stream \(error)")
                }
            }
        }

        /// The indexes of `--index NAME=FILE`, read and checked, each with its model served.
        ///
        /// Names are of the route's form. An index's model that is not among `served` is added
        /// to it: an id of the catalog with the installed models (the default embedder's, which
        /// `serve` does not serve without `--installed-models`), or a path, served under the
        /// id of the served model with the same bytes, else its bundle's id or file name.
        ///
        /// - Parameter served: The models served; the indexes' models are added.
        /// - Returns: The indexes by name, each naming its model by the id it is served under.
        /// - Throws: `ValidationError` naming the flag for a bad name, an unreadable index or a
        ///   model that cannot be loaded.
        func loadedIndexes(served: inout [ServedModel]) throws -> [String: ServedIndex] {
            var loaded: [String: ServedIndex] = [:]
            for text in indexes {
                guard let equals = text.firstIndex(of: "="), equals > text.startIndex else {
                    throw ValidationError("--index \(text): give NAME=FILE (a name for the route, the index file).")
                }
                let name = String(text[..<equals])
                let path = String(text[text.index(after: equals)...])
                let isName =
                    name.utf8.count <= 64 && name.first.map { $0.isASCII && ($0.isLetter || $0.isNumber) } == true
                    && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
                guard isName else {
                    throw ValidationError("--index \(name): a name is letters, digits, '.', '_' and '-' (at most 64).")
                }
                guard loaded[name] == nil else { throw ValidationError("--index names must differ: \(name) twice.") }
                let index: any SimilarityIndex & Sendable
                do {
                    index = try SimilarityIndexFile.read(from: path, verifying: true)
                } catch {
                    throw ValidationError("--index \(name)=\(path): \(error)")
                }
                let id = try servedID(ofModelOf: index, name: name, served: &served)
                if let model = served.first(where: { $0.id == id }) {
                    try Self.check(index, name: name, against: model)
                }
                loaded[name] = ServedIndex(index: index, model: id, path: path)
            }
            return loaded
        }

        /// The id an index's model is served under, loading it into `served` when it is not
        /// there yet (see ``loadedIndexes(served:)``).
        private func servedID(
            ofModelOf index: any SimilarityIndex, name: String, served: inout [ServedModel]
        ) throws
            -> String
        {
            let model = index.model
            if served.contains(where: { $0.id == model }) { return model }
            func refused(_ reason: String) -> ValidationError {
                ValidationError(
                    "--index \(name): its model \(model.isEmpty ? "(not named)" : model) \(reason) "
                        + "(served: \(served.map(\.id).joined(separator: ", "))); make the index again with "
                        + "`similar index --model ID` for a model served here.")
            }
            guard !model.isEmpty else { throw refused("is not named") }
            guard !model.hasPrefix("hub:") else {
                throw refused("is a hub model; serve it first (`netrunner import`) and index with its id")
            }
            let loaded: LoadedModel
            let origin: String
            var id: String
            if ModelCatalog.exists(model) {
                do {
                    loaded = try LoadedModel(.path(model))
                } catch {
                    throw refused("cannot be loaded: \(error)")
                }
                (origin, id) = (model, loaded.description?.id ?? Self.fileID(model))
                // The same bytes served already (the index made with a path to a served bundle).
                if let same = served.first(where: { $0.model.sha256 == loaded.sha256 }) { return same.id }
            } else {
                let catalog = try ModelCatalog.commandLine(folder: models, includesInstalled: true)
                guard let entry = catalog.entry(model) else { throw refused("is not served, and no model has that id") }
                do {
                    loaded = try catalog.load(entry)
                } catch {
                    throw refused("cannot be loaded: \(error)")
                }
                (origin, id) = (entry.origin, entry.id)
            }
            guard !served.contains(where: { $0.id == id }) else {
                throw refused("is not the model served as \(id)")
            }
            guard ImageTask.kind(of: loaded) == .embedding else { throw refused("is no image embedder") }
            Console.diagnostic("note: serving \(id) (\(origin)) for --index \(name)")
            served.append(ServedModel(id: id, model: loaded, origin: origin))
            return id
        }

        /// Refuses an index whose embeddings the model serving it cannot make: a model that is no
        /// embedder, or an embedder of another dimension (every search would fail).
        private static func check(_ index: any SimilarityIndex, name: String, against model: ServedModel) throws {
            let shape = model.model.outputShapes?.first?.dimensions
            var dimension: Int? = shape?.isEmpty == false ? 1 : nil
            for side in shape ?? [] {
                let (product, overflow) = (dimension ?? 0).multipliedReportingOverflow(by: side)
                dimension = side > 0 && !overflow ? product : nil
            }
            let indexed =
                "its \(index.count) embeddings are of \(index.dimension) values, from "
                + "\(index.model.isEmpty ? "a model not named" : index.model)"
            guard model.kind == .embedding else {
                throw ValidationError(
                    "--index \(name): \(indexed), but the model served as \(model.id) is a \(model.kind.rawValue) "
                        + "model, no embedder; make the index again with `similar index --model ID` of an embedder.")
            }
            if let dimension, dimension != index.dimension {
                throw ValidationError(
                    "--index \(name): \(indexed), but the model served as \(model.id) makes embeddings of "
                        + "\(dimension) values; make the index again with `similar index --model \(model.id)`.")
            }
        }

        /// A model file's id as the models folder gives it: its name without the extension.
        private static func fileID(_ path: String) -> String {
            let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
            let name = trimmed.split(separator: "/").last.map(String.init) ?? trimmed
            guard let dot = name.lastIndex(of: "."), dot > name.startIndex else { return name }
            return String(name[..<dot])
        }

        /// The `--stream` values with their names (`stream1`, `stream2` and so on when none is given).
        func namedStreams() -> [(name: String, source: String)] {
            streams.enumerated().map { index, text in
                if let equals = text.firstIndex(of: "="), equals > text.startIndex,
                    text[..<equals].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
                {
                    return (String(text[..<equals]), String(text[text.index(after: equals)...]))
                }
                return ("stream\(index + 1)", text)
            }
        }

        func run() async throws {
            // Bound before the models are checked (makeServer, which gives it to the engine):
            // the --models folder's and the indexes' models count against it too, and the
            // handlers' imports.
            try await ModelGate.$policy.withValue(modelMemory.policy(asServer: true)) {
                let (server, served) = try makeServer(decodesAsServe: true)
                let threadCount = server.engine.configuration.threads
                // Every decode of this server (requests and renderings on the engine's workers,
                // which bind it themselves; albums and their thumbnails in its handlers' tasks)
                // takes its environment, not the command line's default.
                let decoding = server.engine.configuration.decoding
                try await ImageDecoder.$environment.withValue(decoding) {
                    try await listen(server, served: served, threadCount: threadCount)
                }
            }
        }

        /// Whether HEIC and AVIF decode in this process: `--decode-in-process`, or
        /// NETRUNNER_DECODE_IN_PROCESS=1 as for the other commands.
        private var decodesHEIFInProcess: Bool {
            decodesInProcess || ProcessInfo.processInfo.environment[CommandLineMain.decodeInProcessVariable] == "1"
        }

        /// The server's decoding: a decoder process per worker for the formats whose decoders are
        /// not hardened (unless in process), and admission by megapixels: photos over 16 MP share a
        /// budget of two of the largest allowed, decoded at once, whatever the number of workers.
        private func decodingEnvironment(threads: Int, maximumPixelCount: Int) -> DecodingEnvironment {
            DecodingEnvironment(
                isolation: decodesHEIFInProcess
                    ? nil : DecoderIsolation(.init(children: threads, memoryLimit: decoderMemory << 20)),
                admission: PixelBudget(capacity: 2 * maximumPixelCount))
        }

        private func listen(_ server: InferenceServer, served: [ServedModel], threadCount: Int) async throws {
            let (host, port) = (server.configuration.host, server.configuration.port)
            let ids = served.map(\.id).joined(separator: ", ")
            let inProcess = decodesHEIFInProcess
            try await ListenFailure.explaining("netrunner serve", host: host, port: port) {
                try await server.run { host, port in
                    Console.print(
                        "netrunner serve: listening on http://\(host):\(port) (\(served.count) models: \(ids))")
                    Console.print(
                        "  native API: /v1/models; KServe v2: /v2; \(threadCount) worker thread(s); HEIC and AVIF decoded "
                            + (inProcess
                                ? "in process (\(decodesInProcess ? "--decode-in-process" : "NETRUNNER_DECODE_IN_PROCESS=1"):"
                                    + " a decoder crash ends the server)" : "in child processes"))
                    Console.flush()
                }
            }
        }

        /// The server ``run()`` serves, with the models it serves: the options made into an
        /// engine and a configuration (the tests build it in process, as the command does).
        ///
        /// - Parameters:
        ///   - logger: The server's logger (its level is set here: `--verbose`).
        ///   - decodesAsServe: Whether the engine decodes as ``run()``'s does, in decoder
        ///     processes with a pixel budget (``decodingEnvironment(threads:maximumPixelCount:)``);
        ///     `false` (the tests' servers in their own process): the process's default.
        /// - Returns: The server (not started) and its models.
        /// - Throws: `ValidationError` for an unusable models folder or keys file.
        func makeServer(logger: Logger = Logger(label: "netrunner.serve"), decodesAsServe: Bool = false) throws -> (
            server: InferenceServer, served: [ServedModel]
        ) {
            var logger = logger
            logger.logLevel = verbose ? .debug : .notice
            var served = try servedModels()
            let indexes = try loadedIndexes(served: &served)
            var keys = Set(apiKeys)
            if let apiKeysFile {
                let text = String(decoding: try FileIO.contents(of: apiKeysFile, maximumSize: 1 << 20), as: UTF8.self)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let key = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
                    if key.isEmpty { continue }
                    guard InferenceServer.isUsableKey(key) else {
                        throw ValidationError(
                            "--api-keys-file \(apiKeysFile): line \(number + 1) is not a key (keys hold no spaces or control characters)."
                        )
                    }
                    keys.insert(key)
                }
                guard !keys.isEmpty else { throw ValidationError("--api-keys-file \(apiKeysFile) holds no key.") }
            }
            let threadCount = threads ?? ModelOptions.coreCount
            var engineConfiguration = InferenceEngine.Configuration(
                threads: threadCount, queueCapacity: queueCapacity, accelerator: accelerator ?? .cpu,
                maxBatchSize: maxBatchSize ?? 8, maxQueueDelay: .microseconds(Int((maxQueueDelay ?? 2) * 1000)))
            engineConfiguration.modelGate = modelMemory.policy(asServer: true)
            if decodesAsServe {
                engineConfiguration.decoding = decodingEnvironment(
                    threads: threadCount, maximumPixelCount: engineConfiguration.maximumPixelCount)
            }
            let engine = InferenceEngine(models: served, configuration: engineConfiguration, logger: logger)
            var configuration = InferenceServer.Configuration(
                host: host, port: port, maximumUploadBytes: maximumUploadBytes,
                version: CommandLineMain.version, apiKeys: keys, allowedOrigins: Set(corsOrigins),
                modelsFolder: allowsImport ? try ModelsFolder.importTarget(flag: models) : nil, albums: albums,
                streams: namedStreams(),
                streamModel: streamModel, streamInterval: .milliseconds(streamInterval))
            configuration.allowsPrivateImports = allowsPrivateImports
            configuration.indexes = indexes
            configuration.indexPoll = indexPoll > 0 ? .milliseconds(Int((indexPoll * 1000).rounded())) : nil
            configuration.allowedHosts = Set(connections.allowedHosts)
            configuration.idleTimeout = connections.idle
            configuration.maximumConnections = connections.maximumConnections
            configuration.maximumConnectionsPerAddress = connections.maximumConnectionsPerAddress
            configuration.requestTimeout = connections.request(or: configuration.requestTimeout)
            configuration.drainTimeout = connections.drain
            return (InferenceServer(engine: engine, configuration: configuration, logger: logger), served)
        }

        /// Why a `--models` folder that does not exist is refused, with the closest folder beside
        /// it ("did you mean") and how to start an empty one for imports.
        static func missingFolderMessage(_ folder: String) -> String {
            let trimmed = folder.hasSuffix("/") && folder.count > 1 ? String(folder.dropLast()) : folder
            let slash = trimmed.lastIndex(of: "/")
            let parent = slash.map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
            let name = slash.map { String(trimmed[trimmed.index(after: $0)...]) } ?? trimmed
            let siblings = ((try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [])
                .filter { !$0.hasPrefix(".") && ImageArguments.isDirectory(parent + "/" + $0) }.sorted()
            let guess = closestMatch(to: name, in: siblings).map { name in
                " (did you mean \(slash == nil ? name : (parent == "/" ? "/" : parent + "/") + name)?)"
            }
            return "--models \(folder) does not exist\(guess ?? ""). To start an empty models folder for imports, "
                + "make it first: mkdir \(folder)"
        }

        /// The catalog's models (the embedded ones, the models folder's, and with
        /// `--installed-models` the installed ones), one per network.
        func servedModels() throws -> [ServedModel] {
            let folder = try ModelsFolder.resolve(flag: models)?.path
            if let folder {
                // A missing folder is refused, never made: a mistyped --models would otherwise
                // serve no models of its own, silently, and imports would go astray.
                if !FileManager.default.fileExists(atPath: folder) {
                    throw ValidationError(Self.missingFolderMessage(folder))
                }
                guard ImageArguments.isDirectory(folder) else {
                    throw ValidationError("--models \(folder) is not a folder of models.")
                }
                // Staging folders of imports a crash or kill -9 interrupted.
                ModelImporter(modelsFolder: folder).removeAbandonedStagingFolders()
            }
            return try ModelCatalog.commandLine(folder: folder, includesInstalled: servesInstalledModels).servedModels {
                Console.diagnostic("note: " + $0)
            }
        }
    }
}
