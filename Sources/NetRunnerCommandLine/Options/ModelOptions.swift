import ArgumentParser
import NetRunner
import NetRunnerEngine
import TensorFlowLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The model flags of `classify`, `detect`, `bulk` and `stream`, whose `--model` defaults to an
/// embedded model.
package typealias ModelOptions = ModelFlags<EmbeddedModelDefault>

/// The model flags of every command that runs one model over images (`classify`, `detect`,
/// `bulk`, `stream`, `pose`, `segment`): which model, its labels, how many interpreters side by
/// side (`--threads`) and threads inside each (`--runtime-threads`), and the runtime's log.
///
/// `Default` says in `--model`'s help what the command runs without it (``ModelOptions``: the
/// embedded model; ``RequiredModelOptions``: nothing, `--model` is required).
package struct ModelFlags<Default: ModelDefault>: ParsableArguments {
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The model: a path (a .tflite file, a TensorIO bundle folder, a zipped bundle), an id of `netrunner models` (embedded: mobilenet, face; the models folder's, imports included), or hub:NAME[@VERSION|@ALIAS] (\(Default.modelHelp))."
        )
    )
    var model: String?

    @Option(help: "The folder of models --model names by id (\(ModelsFolder.help)).")
    var models: String?

    @Option(help: "The hub of hub: models (\(HubSetting.precedence)).")
    var hub: String?

    @Option(help: "The hub key (default: NETRUNNER_HUB_TOKEN).")
    var token: String?

    @Option(name: .shortAndLong, help: "A labels file, one label per line, replacing the model's own labels.")
    var labels: String?

    @Option(
        name: .shortAndLong, parsing: .unconditional,
        help:
            "Workers: interpreters side by side, each running its own images (default: every core). Threads inside one interpreter are --runtime-threads."
    )
    var threads: Int?

    @Option(
        name: .customLong("runtime-threads"), parsing: .unconditional,
        help:
            "Threads inside each interpreter: the runtime's (XNNPACK's) CPU threads (default: 1 while several interpreters work side by side; one image alone runs on one interpreter with the --threads count)."
    )
    var runtimeThreads: Int?

    @Option(help: AcceleratorHelp.text)
    var accelerator: Accelerator?

    @Flag(name: .long, help: "Show the runtime's own log lines on stderr.")
    var verbose = false

    @Flag(
        name: .customLong("fast-decoding"),
        help:
            "Scale large JPEGs while decoding (DCT domain, as Pillow's draft; a progressive one reads only its low-frequency scans), decode a HEIC's thumbnail: faster on big photos; answers differ slightly from Python's full decode."
    )
    var fastDecoding = false

    /// The old opt-in to what is now the default, still accepted.
    @Flag(name: .customLong("exact-decoding"), help: .hidden)
    var exactDecoding = false

    func validate() throws {
        if let threads { try OptionLimits.checkThreads(threads) }
        if let runtimeThreads { try OptionLimits.checkThreads(runtimeThreads, flag: "--runtime-threads") }
    }

    /// The interpreters side by side: `--threads`, else every online core.
    var threadCount: Int { threads ?? Self.coreCount }

    /// The threads inside one interpreter: `--runtime-threads`, else what the run chose
    /// (``BulkInference`` gives 1 to each of several interpreters, all of `--threads` to a
    /// lone one).
    ///
    /// - Parameter chosen: The run's choice.
    /// - Returns: The interpreter's thread count.
    func runtimeThreadCount(else chosen: Int) -> Int { runtimeThreads ?? chosen }

    /// What the model runs on: `--accelerator`, else the CPU.
    var acceleratorChoice: Accelerator { accelerator ?? .cpu }

    /// The flags as the library's base options, the one place they become options.
    ///
    /// `--accelerator`, `--verbose` and `--fast-decoding`; the thread count is each run's (see
    /// ``runtimeThreadCount(else:)``).
    var baseOptions: BaseOptions {
        var options = BaseOptions()
        options.accelerator = acceleratorChoice
        options.isErrorLoggingEnabled = verbose
        options.scalesWhileDecoding = fastDecoding
        return options
    }

    /// The online cores.
    package static var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// The model `--model` names, or the embedded model of `kind`, with `--labels` applied;
    /// read once, so every thread's task is made from the same bytes.
    ///
    /// - Parameter kind: Which embedded model to use without `--model`.
    /// - Returns: The loaded model.
    /// - Throws: The errors of ``LoadedModel/init(_:labelsPath:)``.
    func load(defaultFor kind: ImageTask.Kind) async throws -> LoadedModel {
        var kind = kind
        if let model {
            // A path first, then hub:, then an id of the catalog.
            if ModelCatalog.exists(model) || HubReference.isHubModel(model) {
                return try LoadedModel(
                    .path(await HubReference.localPath(model, hub: hub, token: token)), labelsPath: labels)
            }
            let catalog = try ModelCatalog.commandLine(folder: models)
            guard let entry = catalog.entry(model) else {
                throw ValidationError(catalog.unknownMessage(model, flag: "--model"))
            }
            if entry.path != nil { return try catalog.load(entry, labelsPath: labels) }
            kind = entry.embedded ?? kind
        } else if (try? EmbeddedModels.source(for: kind)) == nil {
            // pose and segment: the model installed with NetRunner, if it is.
            let catalog = try ModelCatalog.commandLine(folder: models)
            if let entry = catalog.installedDefault(for: kind) { return try catalog.load(entry, labelsPath: labels) }
            throw ValidationError(
                "No \(kind) model is built in, and none is installed (share/netrunner/models beside the "
                    + "executable's folder): give --model (a .tflite file, a bundle, an id of `netrunner models`, or hub:)."
            )
        }
        // The embedded models are part of this executable: trusted, not checked in a child.
        var embedded = try LoadedModel(EmbeddedModels.source(for: kind), labelsPath: labels)
        embedded.trust = .trusted
        return embedded
    }

    /// A one-line notice when a bare `.tflite` gives nothing to go by (no metadata, no
    /// `model.json`, no labels), saying what is assumed for the task; `nil` otherwise.
    ///
    /// - Parameters:
    ///   - model: The loaded model.
    ///   - task: The task the command runs.
    /// - Returns: The notice.
    func assumptionNotice(for model: LoadedModel, task: ImageTask.Kind) -> String? {
        guard self.model != nil, labels == nil else { return nil }
        return Self.assumptionNotice(for: model, task: task)
    }

    /// The notice of ``assumptionNotice(for:task:)`` for a model given without `--labels`
    /// (`run`, which takes none), or `nil` when the model has metadata or a `model.json`.
    ///
    /// - Parameters:
    ///   - model: The loaded model.
    ///   - task: The task it runs.
    /// - Returns: The notice.
    static func assumptionNotice(for model: LoadedModel, task: ImageTask.Kind) -> String? {
        guard model.description == nil, model.metadata == nil else { return nil }
        let definition = VisionTaskRegistry.definition(for: task)
        let assumed = definition?.assumedPreprocessing ?? "RGB"
        guard definition?.namesClasses ?? true else {
            return "note: \(model.name) has no metadata and no model.json beside it: assuming \(assumed) "
                + "(make a bundle to say otherwise: netrunner bundle create)."
        }
        return "note: \(model.name) has no metadata and no model.json beside it: assuming \(assumed), "
            + "and no labels: classes are shown by index (give --labels to name them, or make a bundle: "
            + "netrunner bundle create)."
    }
}
