extension ImageAnswer {
    /// Scores below this print as 0.0000 at the four decimals the tool shows.
    public static let printableScore: Float = 0.000_05

    /// The answer without the classifier labels that would print as 0.0000.
    ///
    /// A uint8 model's top 5 is often padded with exact zeros: this is what `classify`, `bulk`
    /// and the server show when no score threshold is asked for. A detector's answer is
    /// returned as it is.
    public var withoutUnprintableScores: ImageAnswer {
        guard case .classification(var result) = self else { return self }
        result.categories.removeAll { !($0.score >= Self.printableScore) }
        return .classification(result)
    }
}
