import FoundationEssentials
import HTTPTypes
import Hummingbird
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerSupport
import TensorFlowLite

/// Triton's model repository extension: the index and explicit model control.
extension KServeRoutes {
    // MARK: Repository index (Triton's model repository extension)

    /// One model in the index: Triton's states `READY`, `LOADING` and `UNAVAILABLE` (with the
    /// reason it failed).
    struct IndexEntry: Encodable, Equatable {
        var name: String
        var version: String
        var state: String
        var reason: String
    }

    /// The index request: `{"ready": true}` lists only the models ready; an empty body, all.
    struct IndexRequest: Decodable {
        var ready: Bool?

        enum CodingKeys: String, CodingKey { case ready }

        /// `ready`, if given, is `true` or `false`; `null` is refused, not taken for absent.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            ready = container.contains(.ready) ? try container.decode(Bool.self, forKey: .ready) : nil
        }
    }

    /// `POST /v2/repository/index`: every served model with its state, in the order served.
    func repositoryIndex(_ request: Request) async -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: 64 * 1024)
        } catch {
            return Self.error(
                "The index request is larger than 64 KiB; it takes {\"ready\": true}.", status: .contentTooLarge)
        }
        var readyOnly = false
        if body.readableBytesView.contains(where: { !Self.isWhitespace($0) }) {
            do {
                readyOnly =
                    try JSONDecoder().decode(IndexRequest.self, from: Data(body.readableBytesView)).ready ?? false
            } catch {
                return Self.error(
                    "The index request is not {\"ready\": true or false}: \(KServeInference.describe(error))",
                    status: .badRequest)
            }
        }
        return HTTPReply.json(repositoryIndex(readyOnly: readyOnly, showsPaths: showsPaths(request)))
    }

    /// Whether a request may see the models' paths on this machine (see ``access``).
    func showsPaths(_ request: Request) -> Bool {
        access?.hasKey(request.headers) ?? false
    }

    /// The index entries, all models or those ready.
    func repositoryIndex(readyOnly: Bool, showsPaths: Bool = false) -> [IndexEntry] {
        engine.models.compactMap { served in
            let entry: IndexEntry
            switch engine.state(of: served.id) {
            case .ready: entry = IndexEntry(name: served.id, version: "1", state: "READY", reason: "")
            case .loading:
                entry = IndexEntry(name: served.id, version: "1", state: "LOADING", reason: "loading and warming up")
            case .failed(let why):
                entry = IndexEntry(
                    name: served.id, version: "1", state: "UNAVAILABLE",
                    reason: served.failureReason(why, showsPath: showsPaths))
            case .unloaded: entry = IndexEntry(name: served.id, version: "1", state: "UNAVAILABLE", reason: "unloaded")
            case nil: entry = IndexEntry(name: served.id, version: "1", state: "UNKNOWN", reason: "")
            }
            return !readyOnly || entry.state == "READY" ? entry : nil
        }
    }

    // MARK: Model control (Triton's model repository extension, explicit mode)

    /// `POST /v2/repository/models/{name}/load`: serves a model again, read anew from its file
    /// (an embedded model from the program), or for the first time from the models folder;
    /// 200 once it is ready, 404 for a name neither served nor in the folder, 400 when it fails
    /// to load (its reason).
    func load(_ name: String, showsPaths: Bool) async -> Response {
        let engine = self.engine
        let folder = modelsFolder
        // Reading and checking a model (a child process for one not trusted) is no work for
        // the event loop.
        let outcome = await Task.detached { () -> Result<Void, LoadRefusal> in
            let model: ServedModel
            if let served = engine.models.first(where: { $0.id == name }) {
                if served.origin == "embedded" {
                    model = served
                } else {
                    do {
                        model = ServedModel(
                            id: name, model: try LoadedModel(.path(served.origin)), origin: served.origin)
                    } catch {
                        return .failure(LoadRefusal(message: "\(error)", path: served.origin))
                    }
                }
            } else if let folder, let path = (try? ModelDirectory(path: folder))?.models[name] {
                do {
                    model = ServedModel(id: name, model: try LoadedModel(.path(path)), origin: path)
                } catch {
                    return .failure(LoadRefusal(message: "\(error)", path: path))
                }
            } else {
                let known = engine.models.map(\.id)
                return .failure(
                    LoadRefusal(
                        message: "No model \"\(name)\" is served or in the models folder"
                            + (folder == nil ? " (this server reads none: it runs with --no-import)" : "")
                            + "; the models served are: \(known.joined(separator: ", ")).",
                        status: .notFound))
            }
            do {
                try await engine.load(model)
                return .success(())
            } catch EngineError.busy(let queued) {
                return .failure(
                    LoadRefusal(
                        message: "\(EngineError.busy(queued: queued))", path: model.origin, status: .serviceUnavailable)
                )
            } catch {
                return .failure(LoadRefusal(message: "\(error)", path: model.origin))
            }
        }.value
        switch outcome {
        case .success: return Response(status: .ok)
        case .failure(let refusal):
            var message = "failed to load '\(name)': \(refusal.message)"
            if !showsPaths, let path = refusal.path, let slash = path.lastIndex(of: "/") {
                message = message.replacing(path, with: String(path[path.index(after: slash)...]))
            }
            return Self.error(message, status: refusal.status)
        }
    }

    /// The 400 (or 413) of a load or unload body that is not empty or a JSON object (Triton's
    /// `{"parameters": {...}}`, whose parameters are not used here), or `nil`.
    static func refusesControlBody(_ request: Request) async -> Response? {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: 64 * 1024)
        } catch {
            return Self.error(
                "The request is larger than 64 KiB; it takes {\"parameters\": {}}.", status: .contentTooLarge)
        }
        guard body.readableBytesView.contains(where: { !isWhitespace($0) }) else { return nil }
        do {
            _ = try JSONDecoder().decode([String: JSONValue].self, from: Data(body.readableBytesView))
            return nil
        } catch {
            return Self.error(
                "The request is not a JSON object such as {\"parameters\": {}}: \(KServeInference.describe(error))",
                status: .badRequest
            )
        }
    }

    /// Why a model could not be loaded, and where it was read from.
    struct LoadRefusal: Error {
        var message: String
        var path: String? = nil
        var status: HTTPResponse.Status = .badRequest
    }

    /// `POST /v2/repository/models/{name}/unload`: stops serving a model (UNAVAILABLE,
    /// "unloaded" in the index; its files stay); 404 for an unknown name.
    func unload(_ name: String) throws -> Response {
        try engine.unload(name)
        return Response(status: .ok)
    }
}
