import NetRunner
import NetRunnerSupport

/// How `netrunner run` shows a described model's outputs to people, chosen by the model's
/// type as Net Runner chooses its `ModelOutput` display: `options.output_format`, else
/// `model.type`; `image.classification` and every type under it show the top 5 labels above
/// 0.1 of each labelled output (by their display names, as `classify` prints them), anything
/// else lists every output by name.
enum ModelOutputText {
    /// The lines for one run's outputs.
    ///
    /// - Parameters:
    ///   - outputs: The outputs by layer name, as `Model.run` returns them.
    ///   - description: The model's description.
    ///   - maxResults: The most labels shown per output (Net Runner's display: 5).
    ///   - threshold: The lowest score shown (Net Runner's display: 0.1).
    /// - Returns: Lines such as `  0.7954  Egyptian cat`.
    static func lines(
        _ outputs: [String: Model.Output], description: ModelDescription, maxResults: Int = 5, threshold: Double = 0.1
    ) -> [String] {
        isClassification(description)
            ? classification(outputs, description: description, maxResults: maxResults, threshold: threshold)
            : plain(outputs, description: description)
    }

    /// A label as `classify` shows it: its first comma-separated synonym ("bald eagle" for
    /// "bald eagle, American eagle, Haliaeetus leucocephalus"), as ``LabelMap/displayName(_:)``.
    ///
    /// - Parameter label: The label line.
    /// - Returns: The name shown.
    static func displayName(_ label: String) -> String {
        let first = String(label.split(separator: ",", maxSplits: 1).first ?? Substring(label)).trimmingWhitespace()
        return first.isEmpty ? label : first
    }

    /// Whether the display is the classification one: the type is `image.classification` or
    /// one under it (`image.classification.imagenet`).
    static func isClassification(_ description: ModelDescription) -> Bool {
        let type = description.options.outputFormat ?? description.model.type ?? ""
        return type == "image.classification" || type.hasPrefix("image.classification.")
    }

    /// The top labels of each labelled output, one per line.
    private static func classification(
        _ outputs: [String: Model.Output], description: ModelDescription, maxResults: Int, threshold: Double
    ) -> [String] {
        var lines: [String] = []
        for layer in description.outputs {
            guard case .labelled(let scores) = outputs[layer.name] else { continue }
            let top = scores.filter { $0.value >= threshold }.sorted {
                $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key
            }
            if description.outputs.count > 1 { lines.append("\(layer.name):") }
            if top.isEmpty { lines.append("  (no label above \(threshold))") }
            for (label, score) in top.prefix(maxResults) {
                lines.append("  \(fixedDecimals(score, 4))  \(displayName(label))")
            }
        }
        return lines
    }

    /// Each output on its own line (long arrays shortened).
    private static func plain(_ outputs: [String: Model.Output], description: ModelDescription) -> [String] {
        description.outputs.map { layer in
            switch outputs[layer.name] {
            case .scalar(let value): return "  \(layer.name): \(fixedDecimals(value, 4))"
            case .array(let values):
                let shown = values.prefix(8).map { fixedDecimals($0, 4) }.joined(separator: ", ")
                return "  \(layer.name): [\(shown)\(values.count > 8 ? ", ..." : "")] (\(values.count) values)"
            case .labelled(let scores):
                let best = scores.max { $0.value < $1.value }
                return
                    "  \(layer.name): \(scores.count) labels, best \(best.map { "\($0.key) \(fixedDecimals($0.value, 4))" } ?? "-")"
            case nil: return "  \(layer.name): (missing)"
            }
        }
    }
}
