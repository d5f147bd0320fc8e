import Hummingbird
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import Prometheus
import Synchronization

/// The server's Prometheus metrics at `GET /metrics`: requests by route and status, latency
/// histograms per model and stage, the queue depth and the models ready, and for each stream of
/// `serve --stream` its frames by outcome, reconnections, restarts and whether it is running.
///
/// swift-prometheus's registry (the swift-metrics backend) is used directly, not through a
/// global `MetricsSystem.bootstrap`: a program embedding the server keeps its own metrics
/// set-up, and two servers in one process never fight over it.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let engine: InferenceEngine
    private let streams: ServerStreams?
    /// The stream counts already added to the counters, by stream and counter.
    private let published = Mutex<[String: Int]>([:])

    /// Latency buckets: 0.5 ms to 2.5 s.
    static let buckets: [Duration] = [0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2500].map {
        .microseconds(Int64($0 * 1000))
    }

    init(engine: InferenceEngine, streams: ServerStreams? = nil) {
        self.engine = engine
        self.streams = streams
    }

    /// Counts a request by its route template (`/v1/models/{id}/classify`, or `unmatched` for
    /// every path no route matched: the label set is bounded whatever the paths) and status.
    func request(route: String, status: Int) {
        registry.makeCounter(
            descriptor: .init(
                namespace: "netrunner", metricName: "http_requests", unitName: "total",
                helpText: "HTTP requests by route and status."),
            labels: [("route", route), ("status", String(status))]
        ).increment()
    }

    /// Records an answer's stage times.
    func answer(_ answer: ImageAnswer, model: String) {
        for (stage, milliseconds) in [
            ("decode", answer.decodingMilliseconds), ("preprocess", answer.preprocessingMilliseconds),
            ("inference", answer.inferenceMilliseconds),
        ] {
            stageTime(.microseconds(Int64(milliseconds * 1000)), model: model, stage: stage)
        }
    }

    /// Records one stage's time.
    func stageTime(_ duration: Duration, model: String, stage: String) {
        registry.makeDurationHistogram(
            descriptor: .init(
                namespace: "netrunner", metricName: "stage_duration", unitName: "seconds",
                helpText: "Time per image and stage (decode, preprocess, inference) by model."),
            labels: [("model", model), ("stage", stage)], buckets: Self.buckets
        ).record(duration)
    }

    /// The exposition text, with the gauges read now.
    func text() -> String {
        registry.makeGauge(
            descriptor: .init(
                namespace: "netrunner", metricName: "queue_depth", unitName: "requests",
                helpText: "Requests waiting for a worker.")
        ).set(Double(engine.queueDepth))
        let ready = engine.models.filter { engine.state(of: $0.id) == .ready }.count
        registry.makeGauge(
            descriptor: .init(
                namespace: "netrunner", metricName: "models_ready", unitName: "count",
                helpText: "Models loaded and warmed up.")
        ).set(Double(ready))
        if let streams { publish(streams) }
        return registry.emitToString()
    }

    /// Brings the streams' counters up to their totals since the server started (the streams
    /// count for their own page; a Prometheus counter only goes up, by the difference).
    private func publish(_ streams: ServerStreams) {
        for stream in streams.streams {
            guard let status = streams.status(stream.name) else { continue }
            let total = status.total
            let frames = [
                ("received", total.received), ("inferred", total.inferred), ("failed", total.failed),
                ("dropped_while_busy", total.droppedWhileBusy), ("dropped_by_interval", total.droppedByInterval),
            ]
            for (outcome, count) in frames {
                let counter = registry.makeCounter(
                    descriptor: .init(
                        namespace: "netrunner", metricName: "stream_frames", unitName: "total",
                        helpText:
                            "Frames of a stream by outcome (received, inferred, failed, dropped_while_busy, dropped_by_interval)."
                    ),
                    labels: [("stream", stream.name), ("outcome", outcome)])
                counter.increment(by: Int64(newCount(count, key: stream.name + "\u{0}" + outcome)))
            }
            for (name, count, help) in [
                ("reconnections", status.reconnections, "Reconnections of a live stream's source."),
                (
                    "restarts", status.restarts,
                    "Times a stream was started again (a file looping, a failed source retried)."
                ),
            ] {
                registry.makeCounter(
                    descriptor: .init(
                        namespace: "netrunner", metricName: "stream_" + name, unitName: "total", helpText: help),
                    labels: [("stream", stream.name)]
                ).increment(by: Int64(newCount(count, key: stream.name + "\u{0}" + name)))
            }
            registry.makeGauge(
                descriptor: .init(
                    namespace: "netrunner", metricName: "stream", unitName: "up",
                    helpText: "1 while a stream is running, else 0."),
                labels: [("stream", stream.name)]
            ).set(status.state == "running" ? 1.0 : 0.0)
        }
    }

    /// How much a total grew since it was last published (never negative).
    private func newCount(_ total: Int, key: String) -> Int {
        published.withLock { published in
            let grown = max(0, total - published[key, default: 0])
            published[key] = max(total, published[key, default: 0])
            return grown
        }
    }

    /// `GET /metrics`, open (Prometheus scrapes without a key).
    var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        routes.get("/metrics", .open, .elsewhere("Prometheus's exposition format")) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: self.text())))
        }
        return routes
    }
}

/// Counts every request in ``ServerMetrics``, by the route template the router matched
/// (`/v1/models/{id}/classify`), every path no route matched under one label, `unmatched`: the
/// label set is the routes', whatever the paths asked.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let route = context.endpointPath ?? "unmatched"
        do {
            let response = try await next(request, context)
            metrics.request(route: route, status: Int(response.status.code))
            return response
        } catch let error as any HTTPResponseError {
            metrics.request(route: route, status: Int(error.status.code))
            throw error
        } catch {
            metrics.request(route: route, status: 500)
            throw error
        }
    }
}
