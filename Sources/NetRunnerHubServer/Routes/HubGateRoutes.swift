import FoundationEssentials
import HTTPTypes
import Hummingbird
import Logging
import NetRunnerHTTP
import NetRunnerHub
import NetRunnerSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The gates' routes: set and read an alias's gate, a version's evaluations, their reports.
extension HubRoutes {
    /// The metrics a rule may name: the evaluation's (every task's; an embedder's `recall@K`
    /// for any K of 1 to 100) and the hub's own.
    static let gateMetrics =
        [
            "top1", "top5", "classification_accuracy", "mAP50", "mAP50to95", "pck", "oks", "mean_iou", "pixel_accuracy",
            "recall@K",
        ]
        + HubGateRule.hubMetrics

    /// Whether a rule may name a metric.
    ///
    /// - Parameter metric: The metric, as the rule names it (``gateMetrics``; `recall@1` ...
    ///   `recall@100` for `recall@K`).
    /// - Returns: Whether it is known.
    static func isGateMetric(_ metric: String) -> Bool {
        if metric.hasPrefix("recall@"), let k = Int(metric.dropFirst("recall@".count)) { return (1...100).contains(k) }
        return metric != "recall@K" && gateMetrics.contains(metric)
    }

    func addGateRoutes(to routes: inout RouteList<BasicRequestContext>) {
        routes.get("/v1/models/{name}/gates", .keyed, .operation("listGates")) { request, context in
            _ = try await authorize(request, .read)
            return HTTPReply.json(["gates": try await store.gates(of: try Self.name(context))])
        }
        routes.get("/v1/models/{name}/gates/{alias}", .keyed, .operation("getGate")) { request, context in
            _ = try await authorize(request, .read)
            let (name, alias) = (try Self.name(context), try Self.checkedAlias(context.parameters.get("alias") ?? ""))
            guard let gate = try await store.gate(alias, of: name) else {
                throw HubError.notFound("\(name) has no gate on \"\(alias)\".")
            }
            return HTTPReply.json(gate)
        }
        routes.on(.put, "/v1/models/{name}/gates/{alias}", .keyed, .operation("setGate")) { request, context in
            let who = try await authorize(request, .admin)
            let (name, alias) = (try Self.name(context), try Self.checkedAlias(context.parameters.get("alias") ?? ""))
            let (bundles, rules) = try await gateBody(request)
            let (gate, queued) = try await store.setGate(alias, of: name, bundles: bundles, rules: rules, by: who)
            await gates.submit(queued)
            logger.notice("gate of \(alias) of \(name) set by \(who): \(queued.count) versions to evaluate")
            return HTTPReply.json(gate)
        }
        routes.on(.delete, "/v1/models/{name}/gates/{alias}", .keyed, .operation("deleteGate")) { request, context in
            let who = try await authorize(request, .admin)
            let (name, alias) = (try Self.name(context), try Self.checkedAlias(context.parameters.get("alias") ?? ""))
            try await store.removeGate(alias, of: name)
            logger.notice("gate of \(alias) of \(name) removed by \(who)")
            return HTTPReply.json(["deleted": "\(name) gate \(alias)"])
        }
        routes.get("/v1/models/{name}/versions/{version}/evaluations", .keyed, .operation("listEvaluations")) {
            request, context in
            _ = try await authorize(request, .read)
            let (name, number) = (try Self.name(context), try Self.versionNumber(context))
            return HTTPReply.json(["evaluations": try await store.evaluations(of: name, version: number)])
        }
        routes.get(
            "/v1/models/{name}/versions/{version}/evaluations/{alias}/{bundle}", .keyed,
            .operation("evaluationReport")
        ) { request, context in
            _ = try await authorize(request, .read)
            let (name, number) = (try Self.name(context), try Self.versionNumber(context))
            let alias = try Self.checkedAlias(context.parameters.get("alias") ?? "")
            let bundle = try Self.checkedName(context.parameters.get("bundle") ?? "", what: "test bundle")
            let path =
                GateRunner.folder(dataFolder: dataFolder, name: name, version: number, alias: alias)
                + "/reports/\(bundle)/report.html"
            guard let data = FileManager.default.contents(atPath: path) else {
                throw HubError.notFound("\(name)@\(number) has no report for \(bundle) on the gate of \"\(alias)\".")
            }
            var headers = HTTPFields()
            headers[.contentType] = "text/html; charset=utf-8"
            headers[.contentSecurityPolicy] = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: .init(bytes: data)))
        }
    }

    /// `{"bundles": ["imagenet-sample"], "rules": ["top1:min_absolute_change=-0.02", {"metric":
    /// "agreement", "threshold": 0.85}]}`: each bundle a `.testbundle` folder of `--test-bundles`,
    /// each rule as `hub gate --rule` writes it or as JSON.
    func gateBody(_ request: Request) async throws -> ([String], [HubGateRule]) {
        enum RuleInput: Decodable {
            case text(String)
            case rule(HubGateRule)

            init(from decoder: any Decoder) throws {
                if let text = try? decoder.singleValueContainer().decode(String.self) {
                    self = .text(text)
                } else {
                    self = .rule(try HubGateRule(from: decoder))
                }
            }
        }
        struct Body: Decodable {
            var bundles: [String]
            var rules: [RuleInput]
        }
        let data = try await Self.body(of: request, upTo: 64 << 10)
        guard let body = try? JSONDecoder().decode(Body.self, from: data) else {
            throw HubError.badRequest(
                "The body must be JSON: {\"bundles\": [\"imagenet-sample\"], \"rules\": "
                    + "[\"classification_accuracy:min_absolute_change=-0.02\", \"agreement:threshold=0.85\"]}.")
        }
        guard let folder = testBundles else {
            throw HubError.conflict("This hub has no test bundles: start it with --test-bundles DIR to set gates.")
        }
        guard (1...8).contains(body.bundles.count), Set(body.bundles).count == body.bundles.count else {
            throw HubError.badRequest("A gate names 1 to 8 different test bundles.")
        }
        var bundles: [String] = []
        for given in body.bundles {
            let bundle = given.hasSuffix(".testbundle") ? String(given.dropLast(".testbundle".count)) : given
            _ = try Self.checkedName(bundle, what: "test bundle")
            var info = stat()
            guard stat("\(folder)/\(bundle).testbundle/test.json", &info) == 0 else {
                let known = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                    .filter { $0.hasSuffix(".testbundle") }.map { String($0.dropLast(".testbundle".count)) }.sorted()
                throw HubError.badRequest(
                    "No test bundle \"\(bundle)\" on this hub; it has: "
                        + (known.isEmpty ? "none" : known.joined(separator: ", ")) + ".")
            }
            bundles.append(bundle)
        }
        guard (1...32).contains(body.rules.count) else { throw HubError.badRequest("A gate has 1 to 32 rules.") }
        var rules: [HubGateRule] = []
        for input in body.rules {
            var rule: HubGateRule
            switch input {
            case .text(let text):
                do { rule = try HubGateRule(parsing: text) } catch { throw HubError.badRequest(error.description) }
            case .rule(let given): rule = given
            }
            guard Self.isGateMetric(rule.metric) else {
                throw HubError.badRequest(
                    "No metric \"\(rule.metric.prefix(64))\": a rule names one of \(Self.gateMetrics.joined(separator: ", "))."
                )
            }
            let bounds = [rule.threshold, rule.minAbsoluteChange, rule.minRelativeChange].compactMap { $0 }
            guard !bounds.isEmpty, bounds.allSatisfy({ $0.isFinite && abs($0) <= 1e15 }) else {
                throw HubError.badRequest(
                    "The rule on \(rule.metric) needs a finite threshold, min_absolute_change or min_relative_change.")
            }
            rules.append(rule)
        }
        return (bundles, rules)
    }
}
