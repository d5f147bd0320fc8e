import FoundationEssentials
import NetRunner
import NetRunnerEngine
import NetRunnerHub
import NetRunnerJobs
import NetRunnerSupport

/// `GET /v1/imports`.
struct ImportList: Encodable {
    var imports: [ImportJob]
}

/// One import as `GET /v1/imports/{id}` reports it.
struct ImportJob: Encodable, Sendable {
    var id: String
    var source: String
    /// `downloading`, `unpacking`, `validating`, `installing`, then `installed` or `failed`.
    var state = "downloading"
    var receivedBytes = 0
    var totalBytes: Int?
    var error: String?
    var model: ModelInfo?

    enum CodingKeys: String, CodingKey {
        case id, source, state, error, model
        case receivedBytes = "received_bytes"
        case totalBytes = "total_bytes"
    }

    var isRunning: Bool { state != "installed" && state != "failed" }
}

extension ImportJob {
    /// Stages, checks the id against the served models, installs and serves.
    static func run(
        job: String, url: String, sha256: String?, engine: InferenceEngine, importer: ModelImporter,
        jobs: JobStore<ImportJob>
    ) async {
        let progress: @Sendable (ImportProgress) -> Void = { step in
            jobs.update(job) { entry in
                switch step {
                case .downloading(let received, let total):
                    entry.state = "downloading"
                    entry.receivedBytes = received
                    entry.totalBytes = total
                case .unpacking: entry.state = "unpacking"
                case .validating: entry.state = "validating"
                case .installing: entry.state = "installing"
                }
            }
        }
        do {
            let staged = try await importer.stage(from: url, sha256: sha256, progress: progress)
            if (try? engine.model(staged.id)) != nil {
                throw EngineError.modelExists(id: staged.id)
            }
            let installed = try importer.install(staged, progress: progress)
            let served = ServedModel(
                id: installed.id, model: try LoadedModel(.path(installed.path)), origin: installed.path)
            try await engine.add(served)
            jobs.update(job) { entry in
                entry.state = "installed"
                entry.model = ModelInfo(served, engine: engine)
            }
        } catch {
            jobs.update(job) { entry in
                entry.state = "failed"
                entry.error = URLCredentials.masked("\(error)")
            }
        }
    }
}
