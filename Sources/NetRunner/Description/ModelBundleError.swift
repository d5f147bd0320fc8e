public import FoundationEssentials

/// Errors of model bundles and their `model.json` descriptions.
public enum ModelBundleError: Error, Equatable, Hashable, Sendable {
    /// One problem in a description: where (a JSON path such as `inputs[0].format`), what was
    /// expected, and what was found.
    public struct Problem: Equatable, Hashable, Sendable, CustomStringConvertible {
        /// The JSON path of the field.
        public var path: String
        /// What the field must be.
        public var expected: String
        /// What the file holds there (`missing` when the field is absent).
        public var found: String

        /// Creates a problem.
        ///
        /// - Parameters:
        ///   - path: The JSON path.
        ///   - expected: What the field must be.
        ///   - found: What was found.
        public init(path: String, expected: String, found: String) {
            self.path = path
            self.expected = expected
            self.found = found
        }

        /// `path: expected X, found Y`.
        public var description: String { "\(path): expected \(expected), found \(found)" }
    }

    /// The path is not a bundle folder with a `model.json`.
    case notABundle(path: String, reason: String)
    /// `model.json` is not valid JSON.
    case malformedJSON(file: String, reason: String)
    /// `model.json` is JSON but not a valid description; every problem is listed.
    case invalidDescription(file: String, problems: [Problem])
    /// A file the description names does not exist in the bundle.
    case missingFile(bundle: String, file: String)
    /// A file the description names lies outside the bundle (`..`, an absolute path, or a
    /// symbolic link pointing out).
    case fileOutsideBundle(bundle: String, file: String)
    /// A file of the bundle (`model.json`, or one it names) is, or lies behind, a symbolic link
    /// to `target`, outside the bundle: `link` is that link's path in the bundle.
    case linkOutsideBundle(bundle: String, link: String, target: String)
    /// The description does not match the model file (tensor count, shape or type).
    case descriptionMismatch(file: String, problems: [Problem])
    /// The model's TFLite metadata (or the files packed with it) cannot be read.
    case invalidMetadata(file: String, reason: String)
    /// A new bundle's folder already exists; nothing was written.
    case alreadyExists(path: String)
}

extension ModelBundleError: LocalizedError {
    /// A description naming the file, the field and what to do.
    public var errorDescription: String? {
        switch self {
        case .notABundle(let path, let reason):
            return "\(path) is not a model bundle: \(reason)"
        case .alreadyExists(let path):
            return "\(path) already exists; nothing was written. Name a new bundle folder "
                + "(such as my_model.tiobundle), or remove this one first."
        case .malformedJSON(let file, let reason):
            return "\(file) is not valid JSON: \(reason)"
        case .invalidDescription(let file, let problems):
            return
                "\(file) is not a valid model description (\(problems.count) problem\(problems.count == 1 ? "" : "s")): "
                + problems.map(\.description).joined(separator: "; ")
        case .missingFile(let bundle, let file):
            return "\(bundle) has no \(file); fix the file name in model.json or add the file."
        case .fileOutsideBundle(let bundle, let file):
            return "\(bundle): model.json names \(file), which lies outside the bundle; files must be inside it."
        case .linkOutsideBundle(let bundle, let link, let target):
            return "\(bundle): \(link) is a link to \(target), outside the bundle folder; refused. "
                + "Copy the file into the bundle instead."
        case .descriptionMismatch(let file, let problems):
            return "\(file) does not match its model: " + problems.map(\.description).joined(separator: "; ")
        case .invalidMetadata(let file, let reason):
            return "\(file): its TFLite metadata cannot be read: \(reason)."
        }
    }
}

extension ModelBundleError: CustomStringConvertible {
    /// The same text as ``errorDescription``.
    public var description: String { errorDescription ?? "Model bundle error." }
}
