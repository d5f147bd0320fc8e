import NetRunner

/// Counts of expected class against answered class over a classification run, with per-class
/// precision, recall and F1.
///
/// Classes are added as they are seen, in order of first appearance. An example the model gave
/// no answer for (every score under the threshold, or a failed run) counts as ``unanswered`` for
/// its expected class: it lowers that class's recall and no class's precision.
public struct ConfusionMatrix: Equatable, Sendable, Codable {
    /// The classes, in order of first appearance.
    public private(set) var classes: [String] = []
    /// `counts[expected][answered]`, indices into ``classes``.
    public private(set) var counts: [[Int]] = []
    /// Per expected class, the examples with no answer.
    public private(set) var unanswered: [Int] = []
    private var indexOfClass: [String: Int] = [:]

    /// Creates an empty matrix, optionally with classes in a chosen order.
    ///
    /// - Parameter classes: Classes to list first, in this order.
    public init(classes: [String] = []) {
        for name in classes { _ = index(of: name) }
    }

    /// Records one example.
    ///
    /// - Parameters:
    ///   - expected: The expected class.
    ///   - answered: The model's best class, or `nil` when it gave none.
    public mutating func add(expected: String, answered: String?) {
        let row = index(of: expected)
        guard let answered else {
            unanswered[row] += 1
            return
        }
        let column = index(of: answered)
        counts[row][column] += 1
    }

    /// The number of examples recorded.
    public var total: Int { counts.joined().reduce(0, +) + unanswered.reduce(0, +) }

    /// The share of examples whose answer was the expected class.
    public var accuracy: Double {
        let total = total
        guard total > 0 else { return 0 }
        return Double(classes.indices.reduce(0) { $0 + counts[$1][$1] }) / Double(total)
    }

    /// Precision, recall, F1 and support of every class, in the order of ``classes``.
    public var perClass: [ClassStatistics] {
        classes.indices.map { c in
            let truePositives = counts[c][c]
            let answeredAsC = classes.indices.reduce(0) { $0 + counts[$1][c] }
            let support = counts[c].reduce(0, +) + unanswered[c]
            return ClassStatistics(
                label: classes[c], truePositives: truePositives,
                falsePositives: answeredAsC - truePositives,
                falseNegatives: support - truePositives, support: support)
        }
    }

    /// Macro-averaged precision, recall and F1 over the classes that occur as expected answers
    /// (classes only ever answered, never expected, are left out, as scikit-learn does with
    /// `labels` set to the true classes).
    public var macroAverage: (precision: Double, recall: Double, f1: Double) {
        let present = perClass.filter { $0.support > 0 }
        guard !present.isEmpty else { return (0, 0, 0) }
        let n = Double(present.count)
        return (
            present.reduce(0) { $0 + $1.precision } / n,
            present.reduce(0) { $0 + $1.recall } / n,
            present.reduce(0) { $0 + $1.f1 } / n
        )
    }

    private enum CodingKeys: String, CodingKey {
        case classes, counts, unanswered
    }

    /// Decodes a matrix, checking that its rows and columns match its classes.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError.dataCorrupted` for a matrix of the wrong shape, repeated
    ///   classes or negative counts.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let classes = try container.decode([String].self, forKey: .classes)
        let counts = try container.decode([[Int]].self, forKey: .counts)
        let unanswered = try container.decode([Int].self, forKey: .unanswered)
        guard Set(classes).count == classes.count, counts.count == classes.count,
            counts.allSatisfy({ $0.count == classes.count }), unanswered.count == classes.count,
            (counts.joined() + unanswered).allSatisfy({ $0 >= 0 })
        else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "a confusion matrix needs one row and column per distinct class and no negative count"))
        }
        self.init(classes: classes)
        self.counts = counts
        self.unanswered = unanswered
    }

    private mutating func index(of name: String) -> Int {
        if let index = indexOfClass[name] { return index }
        let index = classes.count
        classes.append(name)
        indexOfClass[name] = index
        for row in counts.indices { counts[row].append(0) }
        counts.append(Array(repeating: 0, count: index + 1))
        unanswered.append(0)
        return index
    }
}
