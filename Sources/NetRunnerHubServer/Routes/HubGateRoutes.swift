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
        // K in decimal without leading zeros: Int("05") and Int("+5") are 5.
        if metric.hasPrefix("recall@") { return HubGateRule.recallK(metric) != nil }
        return metric != "recall@K" && gateMetrics.contains(metric)
    }

    func addGateRoutes(to routes: inout RouteList<BasicRequestContext>) {
        routes.get("/v1/models/{name}/gates", .keyed, .operation("listGates"), handler: listGates)
        routes.get("/v1/models/{name}/gates/{alias}", .keyed, .operation("getGate"), handler: getGate)
        routes.on(.put, "/v1/models/{name}/gates/{alias}", .keyed, .operation("setGate"), handler: setGate)
        routes.on(.delete, "/v1/models/{name}/gates/{alias}", .keyed, .operation("deleteGate"), handler: deleteGate)
        routes.get(
            "/v1/models/{name}/versions/{version}/evaluations", .keyed, .operation("listEvaluations"),
            handler: listEvaluations)
        routes.get(
            "/v1/models/{name}/versions/{version}/evaluations/{alias}/{bundle}", .keyed,
            .operation("evaluationReport"), handler: evaluationReport)
    }

    /// `GET /v1/models/{name}/gates`: the model's gates.
    func listGates(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        return HTTPReply.json(["gates": try await store.gates(of: try Self.name(context))])
    }

    /// `GET /v1/models/{name}/gates/{alias}`.
    func getGate(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let (name, alias) = (try Self.name(context), try Self.alias(context))
        guard let gate = try await store.gate(alias, of: name) else {
            throw HubError.notFound("\(name) has no gate on \"\(alias)\".")
        }
        return HTTPReply.json(gate)
    }

    /// `PUT /v1/models/{name}/gates/{alias}` (admin), the body of ``gateBody(_:)``: the versions
    /// to evaluate are queued.
    func setGate(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let who = try await authorize(request, .admin)
        let (name, alias) = (try Self.name(context), try Self.alias(context))
        let (bundles, rules) = try await gateBody(request)
        let (gate, queued) = try await store.setGate(alias, of: name, bundles: bundles, rules: rules, by: who)
        await gates.submit(queued)
        logger.notice("gate of \(alias) of \(name) set by \(who): \(queued.count) versions to evaluate")
        return HTTPReply.json(gate)
    }

    /// `DELETE /v1/models/{name}/gates/{alias}` (admin).
    func deleteGate(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let who = try await authorize(request, .admin)
        let (name, alias) = (try Self.name(context), try Self.alias(context))
        try await store.removeGate(alias, of: name)
        logger.notice("gate of \(alias) of \(name) removed by \(who)")
        return HTTPReply.json(["deleted": "\(name) gate \(alias)"])
    }

    /// `GET /v1/models/{name}/versions/{version}/evaluations`: the version's evaluations.
    func listEvaluations(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let (name, number) = (try Self.name(context), try Self.versionNumber(context))
        // Recorded without the hub's paths; cut here too for rows an older release recorded.
        let evaluations = try await store.evaluations(of: name, version: number).map { evaluation in
            var shown = evaluation
            shown.message = evaluation.message.map { GateMessages.scrubbed($0) }
            return shown
        }
        return HTTPReply.json(["evaluations": evaluations])
    }

    /// `GET /v1/models/{name}/versions/{version}/evaluations/{alias}/{bundle}`: an evaluation's
    /// HTML report, without the hub's folders.
    func evaluationReport(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        _ = try await authorize(request, .read)
        let (name, number) = (try Self.name(context), try Self.versionNumber(context))
        let alias = try Self.alias(context)
        let bundle = try Self.checkedName(context.parameters.require("bundle"), what: "test bundle")
        let path =
            GateRunner.folder(dataFolder: dataFolder, name: name, version: number, alias: alias)
            + "/reports/\(bundle)/report.html"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HubError.notFound("\(name)@\(number) has no report for \(bundle) on the gate of \"\(alias)\".")
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentSecurityPolicy] = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
        // Anonymous readers get it: the hub's own folders (the test bundles', the models' links)
        // are cut, only their known prefixes (a general cut would break the report's images).
        var page = String(decoding: data, as: UTF8.self)
        let evaluation = GateRunner.folder(dataFolder: dataFolder, name: name, version: number, alias: alias)
        var prefixes = [GateRunner.absolute(evaluation) + "/models/", evaluation + "/models/"]
        if let testBundles { prefixes.append(GateRunner.absolute(testBundles) + "/") }
        prefixes += [GateRunner.absolute(dataFolder) + "/", dataFolder + "/"]
        for prefix in prefixes where prefix.count > 1 { page = page.replacing(prefix, with: "") }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: .init(string: page)))
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
            guard FileStatus("\(folder)/\(bundle).testbundle/test.json") != nil else {
                let known = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                    .filter { $0.hasSuffix(".testbundle") }.map { String($0.dropLast(".testbundle".count)) }.sorted()
                throw HubError.badRequest(
                    "No test bundle \"\(bundle)\" on this hub; it has: "
                        + (known.isEmpty ? "none" : known.joined(separator: ", ")) + ".")
            }
            bundles.append(bundle)
        }
        guard (1...32).contains(body.rules.count) else { throw HubError.badRequest("A gate has 1 to 32 rules.") }
        // What each bundle's evaluation gives: a rule it never gives would fail every version.
        let given = bundles.compactMap { GateBundleMetrics(bundle: $0, folder: folder) }
        var rules: [HubGateRule] = []
        for input in body.rules {
            var rule: HubGateRule
            switch input {
            case .text(let text):
                do { rule = try HubGateRule(parsing: text) } catch { throw HubError.badRequest(error.description) }
            case .rule(let given): rule = given
            }
            let givenByAll = given.count == bundles.count && given.allSatisfy { $0.metrics.contains(rule.metric) }
            guard Self.isGateMetric(rule.metric) || givenByAll else {
                throw HubError.badRequest(
                    "No metric \"\(rule.metric.prefix(64))\": a rule names one of \(Self.gateMetrics.joined(separator: ", "))."
                )
            }
            let bounds = [rule.threshold, rule.minAbsoluteChange, rule.minRelativeChange].compactMap { $0 }
            guard !bounds.isEmpty, bounds.allSatisfy({ $0.isFinite && abs($0) <= 1e15 }) else {
                throw HubError.badRequest(
                    "The rule on \(rule.metric) needs a finite threshold, min_absolute_change or min_relative_change.")
            }
            if let refusal = given.lazy.compactMap({ $0.refusal(of: rule.metric) }).first {
                throw HubError.badRequest(refusal)
            }
            rules.append(rule)
        }
        return (bundles, rules)
    }
}
