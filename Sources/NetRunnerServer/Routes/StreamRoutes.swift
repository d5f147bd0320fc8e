import FoundationEssentials
import Hummingbird
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerVideo

/// The streams the server reads (`serve --stream`): `GET /v1/streams`, `GET /v1/streams/{name}`
/// (the latest answer, in the results-line shape, and the counts), and
/// `GET /v1/streams/{name}/frame.jpg` (the latest answered frame with the answer drawn).
struct StreamRoutes {
    let streams: ServerStreams?

    struct Summary: Encodable {
        var name: String
        var source: String
        var model: String
        var state: String
        var problem: String?
        var frame: Int?
        var timestampMilliseconds: Double?
        var result: ResultsLine?
        var received: Int
        var inferred: Int
        var droppedWhileBusy: Int
        var droppedByInterval: Int
        var reconnections: Int
        var restarts: Int

        enum CodingKeys: String, CodingKey {
            case name, source, model, state, problem, frame, result, received, inferred, reconnections, restarts
            case timestampMilliseconds = "timestamp_ms"
            case droppedWhileBusy = "dropped_while_busy"
            case droppedByInterval = "dropped_by_interval"
        }
    }

    func summary(_ stream: ServerStreams.Stream, in streams: ServerStreams) -> Summary? {
        guard let status = streams.status(stream.name) else { return nil }
        return Summary(
            name: stream.name, source: stream.source.description, model: streams.model.id, state: status.state,
            problem: status.problem, frame: status.frame >= 0 ? status.frame : nil,
            timestampMilliseconds: status.frame >= 0 ? status.timestampMilliseconds : nil, result: status.record,
            received: status.total.received, inferred: status.total.inferred,
            droppedWhileBusy: status.total.droppedWhileBusy, droppedByInterval: status.total.droppedByInterval,
            reconnections: status.reconnections,
            restarts: status.restarts)
    }

    /// The routes.
    var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        routes.get("/v1/streams", .keyed, .operation("listStreams")) { _, _ in
            struct List: Encodable { var streams: [Summary] }
            guard let streams else { return HTTPReply.json(List(streams: [])) }
            return HTTPReply.json(List(streams: streams.streams.compactMap { summary($0, in: streams) }))
        }
        routes.get("/v1/streams/{name}", .keyed, .operation("getStream")) { _, context in
            guard let (stream, streams) = find(context) else { return unknown(context) }
            guard let summary = summary(stream, in: streams) else { return unknown(context) }
            return HTTPReply.json(summary)
        }
        routes.get("/v1/streams/{name}/frame.jpg", .keyed, .operation("getStreamFrame")) { _, context in
            guard let (stream, streams) = find(context) else { return unknown(context) }
            guard let jpeg = streams.status(stream.name)?.jpeg else {
                return HTTPReply.error(
                    "Stream \"\(stream.name)\" has no answered frame yet.", status: .notFound,
                    headers: [.retryAfter: "1"])
            }
            return Response(
                status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
        }
        return routes
    }

    private func find(_ context: BasicRequestContext) -> (ServerStreams.Stream, ServerStreams)? {
        guard let streams, let name = context.parameters.get("name"),
            let stream = streams.streams.first(where: { $0.name == name })
        else { return nil }
        return (stream, streams)
    }

    private func unknown(_ context: BasicRequestContext) -> Response {
        HTTPReply.error(
            "No stream named \"\(context.parameters.get("name") ?? "")\" (see /v1/streams).", status: .notFound)
    }
}
