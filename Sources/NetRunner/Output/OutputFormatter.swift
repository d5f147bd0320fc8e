import Synchronization

/// Turns a model's outputs into text for people, chosen by the model's type, as Net Runner's
/// `ModelOutput` classes are chosen by `model.type` (or `options.output_format`).
public protocol OutputFormatter: Sendable {
    /// The text for one run's outputs.
    ///
    /// - Parameters:
    ///   - outputs: The outputs by layer name, as ``Model/run(_:)`` returns them.
    ///   - description: The model's description.
    /// - Returns: Lines of text.
    func format(_ outputs: [String: Model.Output], description: ModelDescription) -> [String]
}

/// The formatters by model type, extensible by library users.
///
///     OutputFormatters.register(MyFormatter(), for: "image.segmentation")
///
/// A type matches its own registration or the longest registered prefix ending at a dot
/// (`image.classification.imagenet` uses `image.classification`). Without a match the
/// outputs are listed as they are.
public enum OutputFormatters {
    private static let registry = Mutex<[String: any OutputFormatter]>([
        "image.classification": ClassificationFormatter(maxResults: 5, threshold: 0.1)
    ])

    /// Registers a formatter for a model type (or a type prefix).
    ///
    /// - Parameters:
    ///   - formatter: The formatter.
    ///   - type: The type, such as `image.classification.imagenet`, or a prefix of it.
    public static func register(_ formatter: any OutputFormatter, for type: String) {
        registry.withLock { $0[type] = formatter }
    }

    /// The formatter for a description: by `options.output_format`, else `model.type`.
    ///
    /// - Parameter description: The model's description.
    /// - Returns: The registered formatter, or the plain one.
    public static func formatter(for description: ModelDescription) -> any OutputFormatter {
        let types = [description.options.outputFormat, description.model.type].compactMap { $0 }
        return registry.withLock { formatters in
            for type in types {
                var candidate = type
                while true {
                    if let formatter = formatters[candidate] { return formatter }
                    guard let dot = candidate.lastIndex(of: ".") else { break }
                    candidate = String(candidate[..<dot])
                }
            }
            return PlainFormatter()
        }
    }
}

/// Net Runner's classification display: the top labels above a threshold, for each labelled
/// output.
public struct ClassificationFormatter: OutputFormatter {
    /// The most labels shown per output.
    public var maxResults: Int
    /// Labels scoring below this are not shown.
    public var threshold: Double

    /// Creates the formatter (Net Runner shows the top 5 above 0.1).
    ///
    /// - Parameters:
    ///   - maxResults: The most labels per output.
    ///   - threshold: The lowest score shown.
    public init(maxResults: Int, threshold: Double) {
        self.maxResults = maxResults
        self.threshold = threshold
    }

    /// The top labels of each labelled output, one per line.
    ///
    /// - Parameters:
    ///   - outputs: The outputs.
    ///   - description: The description.
    /// - Returns: Lines such as `0.7954  Egyptian cat`.
    public func format(_ outputs: [String: Model.Output], description: ModelDescription) -> [String] {
        var lines: [String] = []
        for layer in description.outputs {
            guard case .labelled(let scores) = outputs[layer.name] else { continue }
            let top = scores.filter { $0.value >= threshold }.sorted {
                $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key
            }
            if description.outputs.count > 1 { lines.append("\(layer.name):") }
            if top.isEmpty { lines.append("  (no label above \(threshold))") }
            for (label, score) in top.prefix(maxResults) {
                lines.append("  \(formatScore(score))  \(label)")
            }
        }
        return lines
    }
}

/// The default display: every output, by name.
public struct PlainFormatter: OutputFormatter {
    /// Creates the formatter.
    public init() {}

    /// Each output on its own line (long arrays shortened).
    ///
    /// - Parameters:
    ///   - outputs: The outputs.
    ///   - description: The description.
    /// - Returns: Lines such as `scores: [0.1, 0.2, ...] (10 values)`.
    public func format(_ outputs: [String: Model.Output], description: ModelDescription) -> [String] {
        description.outputs.map { layer in
            switch outputs[layer.name] {
            case .scalar(let value): return "  \(layer.name): \(formatScore(value))"
            case .array(let values):
                let shown = values.prefix(8).map(formatScore).joined(separator: ", ")
                return "  \(layer.name): [\(shown)\(values.count > 8 ? ", ..." : "")] (\(values.count) values)"
            case .labelled(let scores):
                let best = scores.max { $0.value < $1.value }
                return
                    "  \(layer.name): \(scores.count) labels, best \(best.map { "\($0.key) \(formatScore($0.value))" } ?? "-")"
            case nil: return "  \(layer.name): (missing)"
            }
        }
    }
}

/// A score with four decimals.
func formatScore(_ value: Double) -> String {
    guard value.isFinite else { return "\(value)" }
    let scaled = (value * 10_000).rounded() / 10_000
    var text = String(scaled)
    if let dot = text.firstIndex(of: ".") {
        let decimals = text.distance(from: dot, to: text.endIndex) - 1
        if decimals < 4 { text += String(repeating: "0", count: 4 - decimals) }
    }
    return text
}
