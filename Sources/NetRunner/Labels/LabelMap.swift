import FoundationEssentials
import NetRunnerSupport

/// The names of a model's classes, one per output index.
///
/// Read from a text file with one label per line, as the TensorFlow Lite examples, TensorIO
/// and the Task Library ship them. Two conventions are handled:
///
/// - a file with one label more than the model has classes, whose first line is
///   `background` or `???`, is the TFLite "1001 labels" convention: the first line is dropped
///   and index 0 is the first real class;
/// - ImageNet-style lines holding comma-separated synonyms (`tabby, tabby cat`) keep the whole
///   line as the label, and the first synonym as the short display name.
public struct LabelMap: Equatable, Hashable, Sendable {
    /// The labels, indexed by class.
    public let labels: [String]

    /// Creates a label map from labels indexed by class.
    ///
    /// - Parameter labels: One label per class.
    public init(labels: [String]) {
        self.labels = labels
    }

    /// Reads labels from a file, one per line; blank trailing lines are ignored.
    ///
    /// - Parameters:
    ///   - path: The labels file.
    ///   - classCount: The model's number of classes, if known: the count is checked against
    ///     it, after dropping a leading background label if that makes them agree.
    /// - Throws: ``NetRunnerError/unreadableLabels(file:reason:)``,
    ///   ``NetRunnerError/labelCountMismatch(file:labels:classes:)``.
    public init(contentsOfFile path: String, classCount: Int? = nil) throws(NetRunnerError) {
        try self.init(text: try Self.text(contentsOfFile: path), source: path, classCount: classCount)
    }

    /// The text of a labels file.
    ///
    /// - Parameter path: The labels file.
    /// - Returns: Its text.
    /// - Throws: ``NetRunnerError/unreadableLabels(file:reason:)`` for a missing file or one
    ///   that is not UTF-8.
    static func text(contentsOfFile path: String) throws(NetRunnerError) -> String {
        let data: Data
        do {
            data = try FileIO.contents(of: path)
        } catch {
            guard case .unreadable(_, let reason) = error else {
                throw .unreadableLabels(file: path, reason: "\(error)")
            }
            throw .unreadableLabels(file: path, reason: reason)
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw .unreadableLabels(file: path, reason: "the file is not UTF-8 text")
        }
        return text
    }

    /// Parses labels from text, one per line.
    ///
    /// - Parameters:
    ///   - text: The file's contents.
    ///   - source: The file name used in errors.
    ///   - classCount: The model's number of classes, if known.
    /// - Throws: ``NetRunnerError/labelCountMismatch(file:labels:classes:)``.
    public init(text: String, source: String = "labels", classCount: Int? = nil) throws(NetRunnerError) {
        // "\r\n" is one Character in Swift: split on both line endings.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map(String.init)
        while let last = lines.last, last.allSatisfy(\.isWhitespace) { lines.removeLast() }
        if let classCount, lines.count == classCount + 1, let first = lines.first,
            Self.backgroundNames.contains(first.lowercased())
        {
            lines.removeFirst()
        }
        if let classCount, lines.count != classCount {
            throw .labelCountMismatch(file: source, labels: lines.count, classes: classCount)
        }
        self.labels = lines
    }

    /// First lines that mark the TFLite "background" convention.
    static let backgroundNames: Set<String> = ["background", "???", "__background__"]

    /// The number of labels.
    public var count: Int { labels.count }

    /// The label of a class, or `nil` when the index is out of range.
    ///
    /// - Parameter index: The class index.
    public subscript(index: Int) -> String? {
        labels.indices.contains(index) ? labels[index] : nil
    }

    /// The short name of a class: the first comma-separated synonym of its label.
    ///
    /// - Parameter index: The class index.
    /// - Returns: The name, or `nil` when the index is out of range.
    public func displayName(_ index: Int) -> String? {
        self[index].map { label in
            String(label.split(separator: ",", maxSplits: 1).first ?? Substring(label))
                .trimmingWhitespace()
        }
    }
}

extension String {
    /// The string without leading and trailing whitespace.
    package func trimmingWhitespace() -> String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
