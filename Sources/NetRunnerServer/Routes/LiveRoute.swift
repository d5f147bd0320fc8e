import FoundationEssentials
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerSupport

/// The camera feed of the seed apps over a WebSocket: `/v1/live?model=ID` (plus the answer
/// options of `/v1`, and `preview=1` for "what the model sees").
///
/// Each binary message is one encoded frame (a JPEG from the page's canvas); each answer is
/// one text message, `{"frame": N, "result": <results line>, "input": "data:image/png;base64,..."}`.
/// The page sends the next frame only when the answer to the last has come back (after its
/// interval), so the newest frame always wins and nothing piles up while the server is busy.
struct LiveRoute: Sendable {
    let engine: InferenceEngine
    let model: String
    let options: AnswerOptions
    let preview: Bool
    let maximumFrameBytes: Int
    /// Why this socket cannot answer frames (an unknown model, bad options), or `nil`.
    var problem: String?

    /// `GET /v1/live`, keyed: the upgrade is answered before the router (``match``); a request
    /// that reaches the router did not ask for one, and gets 426 saying so.
    static var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        routes.get("/v1/live", .keyed, .elsewhere("a WebSocket, docs/serve.md")) { _, _ in
            HTTPReply.error(
                "/v1/live is a WebSocket: open it with an upgrade (the web page's camera does).",
                status: .upgradeRequired, headers: [.upgrade: "websocket", .connection: "Upgrade"])
        }
        return routes
    }

    /// The route a WebSocket upgrade request asks for, or `nil` when it is not `/v1/live`.
    ///
    /// A request naming no served model, or bad options, is still upgraded: the page gets the
    /// reason as its first message (``problem``), then the socket closes.
    /// A request refused by ``ServerAccess/browserRefusal(_:)`` (a foreign `Origin` or `Host`)
    /// is not upgraded either: the router answers it, with that refusal.
    static func match(
        _ request: HTTPRequest, engine: InferenceEngine, maximumFrameBytes: Int,
        access: ServerAccess = ServerAccess(
            keys: [], browsers: BrowserGuard(origins: [], allowedHosts: [], bindHost: ""))
    ) -> LiveRoute? {
        let uri = URI(request.path ?? "")
        guard uri.path == "/v1/live", access.browserRefusal(request) == nil else { return nil }
        let query = uri.queryParameters
        let model = query.get("model") ?? ""
        var problem: String?
        var options = AnswerOptions()
        do {
            let served = try engine.model(model)
            options = try AnswerOptions(query, task: served.kind, also: ["model", "preview", "key"])
        } catch {
            problem = "\(error)"
        }
        // Browsers cannot give a WebSocket headers: the key comes as ?key= (here only).
        if access.needsKey(method: request.method, route: "/v1/live", open: []), !access.hasKey(request.headerFields) {
            let key = query.get("key") ?? ""
            if key.isEmpty || !access.keys.contains(key) {
                problem = "This server needs an API key: open the page as /#key=KEY, or add ?key=KEY."
            }
        }
        return LiveRoute(
            engine: engine, model: model, options: options, preview: query.get("preview") == "1",
            maximumFrameBytes: maximumFrameBytes, problem: problem)
    }

    /// One answer on the socket.
    struct Message: Encodable {
        var frame: Int
        var result: ResultsLine
        var input: String?
    }

    /// Answers every frame until the page closes the socket.
    func serve(_ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter) async throws {
        var frame = 0
        let encoder = JSONCoding.encoder()
        if let problem {
            let reply = Message(frame: 0, result: ResultsLine(image: "live", model: model, error: problem))
            try await outbound.write(.text(String(decoding: try encoder.encode(reply), as: UTF8.self)))
            try await outbound.close(.policyViolation, reason: "cannot serve this model")
            return
        }
        for try await message in inbound.messages(maxSize: maximumFrameBytes) {
            guard case .binary(let buffer) = message else { continue }
            frame += 1
            let name = "frame \(frame)"
            var reply: Message
            do {
                let found = try await engine.answerShowingInput(
                    model: model, image: Data(buffer.readableBytesView), options: options.taskOptions,
                    includeInput: preview)
                reply = Message(
                    frame: frame,
                    result: ResultsLine(image: name, model: model, answer: options.results.shown(found.answer)),
                    input: found.input.map { "data:image/png;base64," + $0.base64EncodedString() })
            } catch {
                reply = Message(frame: frame, result: ResultsLine(image: name, model: model, error: "\(error)"))
            }
            try await outbound.write(.text(String(decoding: try encoder.encode(reply), as: UTF8.self)))
        }
    }
}
