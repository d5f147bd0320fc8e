public import FoundationEssentials

/// Errors of the model-level tasks: labels that do not fit a model, models whose inputs or
/// outputs are not what a task needs.
public enum NetRunnerError: Error, Equatable, Hashable, Sendable {
    /// A labels file could not be read.
    case unreadableLabels(file: String, reason: String)
    /// A labels file has a different number of labels than the model has classes.
    case labelCountMismatch(file: String, labels: Int, classes: Int)
    /// The model's input is not an image tensor this task can fill.
    case notAnImageModel(model: String, reason: String)
    /// The model's outputs are not what the task expects.
    case unsupportedOutputs(model: String, reason: String)
    /// An option has a value outside its range.
    case invalidOption(name: String, reason: String)
}

extension NetRunnerError: LocalizedError {
    /// A description naming the file or option and what to do.
    public var errorDescription: String? {
        switch self {
        case .unreadableLabels(let file, let reason):
            "\(file): cannot read the labels: \(reason)"
        case .labelCountMismatch(let file, let labels, let classes):
            "\(file) has \(labels) labels but the model has \(classes) classes; "
                + "use the labels file made for this model."
        case .notAnImageModel(let model, let reason):
            "\(model) is not an image model this task can run: \(reason)"
        case .unsupportedOutputs(let model, let reason):
            "\(model) has outputs this task cannot read: \(reason)"
        case .invalidOption(let name, let reason):
            "Invalid \(name): \(reason)"
        }
    }
}

extension NetRunnerError: CustomStringConvertible {
    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "Unknown error." }
}
