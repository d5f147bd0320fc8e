/// One class a model recognised, with its score: the Task Library's and MediaPipe's `Category`.
public struct Category: Equatable, Hashable, Sendable, Codable {
    /// The class index in the model's output.
    public var index: Int
    /// The score, after dequantization (and softmax, for models that output logits).
    public var score: Float
    /// The class's label from the labels file (the whole line), or `nil` without labels.
    public var label: String?
    /// A short name for display: the label's first comma-separated synonym.
    public var displayName: String?

    /// Creates a category.
    ///
    /// - Parameters:
    ///   - index: The class index.
    ///   - score: The score.
    ///   - label: The label, if known.
    ///   - displayName: The short name, if known.
    public init(index: Int, score: Float, label: String? = nil, displayName: String? = nil) {
        self.index = index
        self.score = score
        self.label = label
        self.displayName = displayName
    }
}
