import FoundationEssentials
import Hummingbird
import NIOCore
import NetRunner
import NetRunnerEngine
import NetRunnerHTTP
import NetRunnerHub
import NetRunnerJobs
import NetRunnerSupport

/// Net Runner's import by URL, for the web app's Settings and for programs: `POST /v1/imports`
/// with `{"url": "https://...", "sha256": "..."}` starts an import (202, `Location:
/// /v1/imports/{id}`), `GET /v1/imports/{id}` tells how far it got (bytes received, the step, the
/// error, or the model once it is served), `GET /v1/imports` lists the recent ones.
///
/// The import is `netrunner import`'s (``ModelImporter``): the model is downloaded, unpacked,
/// validated and checked in a child process in a hidden staging folder, its id checked against
/// the models served, installed into the models folder, then served at once. Only http(s) URLs
/// are taken (never a path on the server), and only of public hosts (never loopback, private or
/// link-local addresses, directly, by name or by redirect) unless the server runs with
/// `--allow-private-imports`; two imports run at a time, the last 50 are kept. A URL's user and
/// password never appear in a listing, an error or the log.
struct ImportRoutes {
    let engine: InferenceEngine
    /// The importer; `nil` when imports are off (`--no-import`): `POST` answers 403.
    let importer: ModelImporter?
    /// The imports of this server's life, the last 50, at most ``concurrentImports`` at once.
    let jobs = JobStore<ImportJob>(kept: 50, maximumRunning: ImportRoutes.concurrentImports, isRunning: \.isRunning)

    /// The largest request body (a URL and a digest).
    static let maximumBodyBytes = 64 << 10
    /// Imports running at once.
    static let concurrentImports = 2

    /// The routes.
    var routes: RouteList<BasicRequestContext> {
        var routes = RouteList<BasicRequestContext>()
        routes.post("/v1/imports", .keyed, .operation("importModel")) { request, _ in await start(request) }
        routes.get("/v1/imports", .keyed, .operation("listImports")) { _, _ in
            HTTPReply.json(ImportList(imports: jobs.all))
        }
        routes.get("/v1/imports/{id}", .keyed, .operation("getImport")) { _, context in
            guard let job = jobs.job(context.parameters.get("id") ?? "") else {
                return HTTPReply.error("No import with this id (GET /v1/imports lists them).", status: .notFound)
            }
            return HTTPReply.json(job)
        }
        return routes
    }

    struct Body: Decodable {
        var url: String
        var sha256: String?
    }

    func start(_ request: Request) async -> Response {
        guard let importer else {
            return HTTPReply.error(
                "Imports are off on this server (started with --no-import); import with `netrunner import URL` instead.",
                status: .forbidden)
        }
        let data: ByteBuffer
        do {
            data = try await request.body.collect(upTo: Self.maximumBodyBytes)
        } catch {
            return HTTPReply.error(
                "The body is larger than \(Self.maximumBodyBytes) bytes; send {\"url\": \"https://...\"}.",
                status: .contentTooLarge)
        }
        let body: Body
        let bytes = Data(data.readableBytesView)
        do {
            body = try JSONDecoder().decode(Body.self, from: bytes)
        } catch {
            var problem = "it has no \"url\" string"
            if let (line, column, reason) = JSONSyntax.firstError(in: bytes) {
                problem = "line \(line), column \(column): \(reason)"
            }
            return HTTPReply.error(
                "The body must be JSON such as {\"url\": \"https://example.org/model.tiobundle.zip\"} "
                    + "(and optionally \"sha256\"); \(problem).",
                status: .badRequest)
        }
        let url = body.url.trimmingWhitespace()
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), url.utf8.count <= 8192 else {
            return HTTPReply.error(
                "Only http:// and https:// URLs can be imported here (of a zipped bundle or a .tflite model).",
                status: .badRequest)
        }
        // A host that is not public is refused before anything starts (a redirect to one fails the job).
        do {
            try await importer.checkAddress(of: url)
        } catch {
            return HTTPReply.error("\(error)", status: .badRequest)
        }
        guard let job = jobs.begin({ ImportJob(id: $0, source: URLCredentials.masked(url)) }) else {
            return HTTPReply.error(
                "\(Self.concurrentImports) imports are running; retry when one has finished.", status: .tooManyRequests,
                headers: [.retryAfter: "5"])
        }
        let (engine, jobs) = (self.engine, self.jobs)
        Task.detached {
            await ImportJob.run(job: job, url: url, sha256: body.sha256, engine: engine, importer: importer, jobs: jobs)
        }
        return HTTPReply.json(
            jobs.job(job) ?? ImportJob(id: job, source: URLCredentials.masked(url)), status: .accepted,
            headers: [.location: "/v1/imports/\(job)"])
    }
}

extension String {
    /// The text without surrounding white space.
    fileprivate func trimmingWhitespace() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
