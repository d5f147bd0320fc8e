#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sigmoid score calibration, as TFLite metadata describes it (`ScoreCalibrationOptions` with
/// a `TENSOR_AXIS_SCORE_CALIBRATION` file): for class `i` with parameters (scale, slope,
/// offset, optional min_score), `f(x) = scale / (1 + e^-(slope * g(x) + offset))` when `x`
/// exceeds min_score (or there is none), else the default score; classes without parameters
/// get the default score.
public struct ScoreCalibration: Equatable, Hashable, Sendable {
    /// The transform applied to a score before the sigmoid.
    public enum Transformation: String, Equatable, Hashable, Sendable {
        /// `g(x) = x`.
        case identity
        /// `g(x) = log(x)`.
        case log
        /// `g(x) = log(x) - log(1 - x)`.
        case inverseLogistic
    }

    /// One class's parameters.
    public struct Parameters: Equatable, Hashable, Sendable {
        /// The sigmoid's scale.
        public var scale: Float
        /// The sigmoid's slope.
        public var slope: Float
        /// The sigmoid's offset.
        public var offset: Float
        /// Scores at or below this get the default score.
        public var minimumScore: Float?
    }

    /// The transform before the sigmoid.
    public var transformation: Transformation
    /// The score of classes without parameters, or at or below their minimum.
    public var defaultScore: Float
    /// Each class's parameters (`nil`: the default score).
    public var parameters: [Parameters?]

    /// Parses the calibration file: one line per class, empty or `scale,slope,offset[,min_score]`.
    ///
    /// - Parameters:
    ///   - text: The file's contents.
    ///   - transformation: The metadata's score transformation.
    ///   - defaultScore: The metadata's default score.
    ///   - source: The file's name, for errors.
    /// - Throws: ``NetRunnerError/invalidOption(name:reason:)`` naming the bad line.
    public init(text: String, transformation: Transformation, defaultScore: Float, source: String)
        throws(NetRunnerError)
    {
        var parameters: [Parameters?] = []
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (number, line) in lines.enumerated() {
            let fields = line.split(separator: ",").map { String($0).trimmingWhitespace() }
            if fields.isEmpty || (fields.count == 1 && fields[0].isEmpty) {
                if number < lines.count - 1 { parameters.append(nil) }
                continue
            }
            let values = fields.compactMap(Float.init)
            guard values.count == fields.count, values.count == 3 || values.count == 4, values.allSatisfy(\.isFinite),
                values[0] >= 0
            else {
                throw .invalidOption(
                    name: "score calibration",
                    reason: "\(source) line \(number + 1) is not scale,slope,offset[,min_score]")
            }
            parameters.append(
                Parameters(
                    scale: values[0], slope: values[1], offset: values[2],
                    minimumScore: values.count == 4 ? values[3] : nil))
        }
        self.transformation = transformation
        self.defaultScore = defaultScore
        self.parameters = parameters
    }

    /// The calibrated score of class `index`.
    ///
    /// - Parameters:
    ///   - score: The model's score.
    ///   - index: The class index.
    /// - Returns: The calibrated score.
    public func calibrate(_ score: Float, index: Int) -> Float {
        guard index < parameters.count, let p = parameters[index] else { return defaultScore }
        if let minimum = p.minimumScore, score <= minimum { return defaultScore }
        let transformed: Float
        switch transformation {
        case .identity: transformed = score
        case .log: transformed = logf(score)
        case .inverseLogistic: transformed = logf(score) - logf(1 - score)
        }
        let value = p.scale / (1 + expf(-(p.slope * transformed + p.offset)))
        return value.isFinite ? value : defaultScore
    }
}
