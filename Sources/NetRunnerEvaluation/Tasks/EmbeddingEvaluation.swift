import FoundationEssentials
import NetRunner

/// Evaluating image embedders by retrieval: Recall@K, as metric-learning work reports it (Song
/// et al., "Deep Metric Learning via Lifted Structured Feature Embedding", 2016; Stanford
/// Online Products, CUB-200).
///
/// A test bundle labels each image with its class: `{"inference_results": {"embedding":
/// {"class": "cat"}}}`. Every labelled image is a query against all the others: it counts at K
/// when one of the K images nearest to it (cosine similarity, itself left out; ties by name) is
/// of its class. An image whose class has no other image is a distractor only, never a query.
/// The report's `metric` holds `recall@1` and `recall@K` of the test's metric; its breakdown
/// Recall@1 per class; each example lists an image's five nearest with their similarity.
struct EmbeddingEvaluation: TaskEvaluation {
    /// The evaluation.
    init() {}

    var kind: ImageTask.Kind { .embedding }
    var metricNames: [String] { ["recall@1 ... recall@100"] }
    var labelForm: String { "inference_results.embedding {\"class\": NAME}" }
    var labelNoun: String { "embedding classes" }
    var metricNoun: String { "an embedding metric such as recall@1" }

    /// The largest K a test may name.
    static let largestK = 100

    func metric(named name: String) -> TestMetric? {
        let lowered = name.lowercased()
        guard lowered.hasPrefix("recall@"), let k = Int(lowered.dropFirst("recall@".count)),
            (1...Self.largestK).contains(k)
        else { return nil }
        return TestMetric(kind: kind, name: name)
    }

    /// The K of a metric the evaluation named.
    private func k(of metric: TestMetric) -> Int {
        Int(metric.name.lowercased().dropFirst("recall@".count)) ?? 1
    }

    /// An image's label: `{"class": NAME}`.
    private struct Label: Decodable {
        var `class`: String
    }

    /// Each labelled image's class, or why its label cannot be read.
    private func classes(_ test: TestBundleDescription) -> [String: Result<String, LabelProblem>] {
        test.labels(of: kind).mapValues { data in
            guard let label = try? JSONDecoder().decode(Label.self, from: data), !label.class.isEmpty else {
                return .failure(LabelProblem(text: "an embedding label is {\"class\": NAME}, NAME not empty"))
            }
            return .success(label.class)
        }
    }

    func labelledImages(in test: TestBundleDescription) -> Int { test.labels(of: kind).count }

    func rightAnswerRule(_ model: ModelReport, metric: String) -> String {
        "its nearest other image (by cosine similarity) is of its class"
    }

    func metricText(_ value: Double) -> String { HTMLReport.percent(value) }

    func score(
        _ report: inout ModelReport, test: TestBundleDescription, metric: TestMetric, images: [String],
        answers: [String: ImageAnswer]
    ) {
        var gallery: [(image: String, label: String, vector: [Float])] = []
        for (image, label) in classes(test).sorted(by: { $0.key < $1.key }) {
            switch label {
            case .failure(let problem):
                report.failures.append(.init(image: image, error: "its label is not scored: \(problem.text)"))
            case .success(let name):
                guard case .other(let result as EmbeddingResult)? = answers[image] else { continue }
                gallery.append((image, name, ImageEmbedder.l2Normalized(result.embedding)))
            }
        }
        let dimension = gallery.first?.vector.count ?? 0
        gallery.removeAll { entry in
            guard entry.vector.count != dimension else { return false }
            report.failures.append(
                .init(image: entry.image, error: "its embedding has \(entry.vector.count) values, not \(dimension)"))
            return true
        }
        let members = Dictionary(gallery.map { ($0.label, 1) }, uniquingKeysWith: +)
        let ks = Array(Set([1, k(of: metric)])).sorted()
        var found = [Int: Int]()
        var perClass: [String: (right: Int, count: Int)] = [:]
        var queries = 0
        for (index, query) in gallery.enumerated() where (members[query.label] ?? 0) > 1 {
            queries += 1
            var ranked: [(index: Int, similarity: Double)] = []
            ranked.reserveCapacity(gallery.count - 1)
            for (other, entry) in gallery.enumerated() where other != index {
                var dot = 0.0
                for (a, b) in zip(query.vector, entry.vector) { dot += Double(a) * Double(b) }
                ranked.append((other, dot))
            }
            // Most alike first; the gallery is sorted by image, so ties go to the first name.
            ranked.sort { $0.similarity != $1.similarity ? $0.similarity > $1.similarity : $0.index < $1.index }
            for k in ks where ranked.prefix(k).contains(where: { gallery[$0.index].label == query.label }) {
                found[k, default: 0] += 1
            }
            let right = ranked.first.map { gallery[$0.index].label == query.label } ?? false
            perClass[query.label, default: (0, 0)].count += 1
            perClass[query.label, default: (0, 0)].right += right ? 1 : 0
            report.examples.append(
                .init(
                    image: query.image, expected: [query.label], expectedBoxes: nil,
                    answers: ranked.prefix(5).map {
                        .init(
                            label: "\(gallery[$0.index].label): \(Self.fileName(gallery[$0.index].image))",
                            score: Float($0.similarity), box: nil)
                    },
                    correct: right))
        }
        report.metric = Dictionary(
            uniqueKeysWithValues: ks.map {
                ("recall@\($0)", queries == 0 ? 0 : Double(found[$0] ?? 0) / Double(queries))
            })
        report.breakdown = .init(
            title: "Recall@1 per class (its nearest other image is of its class)", labelHeading: "Class",
            countHeading: "Queries", valueHeadings: ["Recall@1"],
            rows: perClass.keys.sorted().map { name in
                let entry = perClass[name] ?? (0, 0)
                return .init(
                    label: name, count: entry.count, values: [Double(entry.right) / Double(max(entry.count, 1))])
            })
    }

    /// Two embeddings agree when their cosine similarity is at least 0.99 (a re-encode of the
    /// same photo is about 0.99, docs/embeddings.md); the difference is 1 minus the cosine.
    func agreement(of answer: ImageAnswer, with baseline: ImageAnswer) -> (same: Bool, scoreDifference: Double?)? {
        guard case .other(let mine as EmbeddingResult) = answer, case .other(let theirs as EmbeddingResult) = baseline,
            let cosine = try? ImageEmbedder.cosineSimilarity(mine, theirs)
        else { return nil }
        return (cosine >= 0.99, 1 - cosine)
    }

    /// The last part of an image's path.
    private static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
