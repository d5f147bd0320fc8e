import NetRunner

/// One class's figures in a ``ConfusionMatrix``.
public struct ClassStatistics: Equatable, Sendable, Codable {
    /// The class.
    public var label: String
    /// Examples of this class answered as this class.
    public var truePositives: Int
    /// Examples of other classes answered as this class.
    public var falsePositives: Int
    /// Examples of this class answered otherwise or not at all.
    public var falseNegatives: Int
    /// Examples of this class.
    public var support: Int

    /// Creates the figures of one class.
    ///
    /// - Parameters:
    ///   - label: The class.
    ///   - truePositives: Examples of this class answered as this class.
    ///   - falsePositives: Examples of other classes answered as this class.
    ///   - falseNegatives: Examples of this class answered otherwise or not at all.
    ///   - support: Examples of this class.
    public init(label: String, truePositives: Int, falsePositives: Int, falseNegatives: Int, support: Int) {
        self.label = label
        self.truePositives = truePositives
        self.falsePositives = falsePositives
        self.falseNegatives = falseNegatives
        self.support = support
    }

    /// TP / (TP + FP); 0 when the class was never answered.
    public var precision: Double {
        truePositives + falsePositives == 0 ? 0 : Double(truePositives) / Double(truePositives + falsePositives)
    }

    /// TP / (TP + FN); 0 when the class never occurs.
    public var recall: Double {
        truePositives + falseNegatives == 0 ? 0 : Double(truePositives) / Double(truePositives + falseNegatives)
    }

    /// The harmonic mean of precision and recall; 0 when both are 0.
    public var f1: Double {
        precision + recall == 0 ? 0 : 2 * precision * recall / (precision + recall)
    }
}
