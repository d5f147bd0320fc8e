/// One rule of a hub gate, in MLflow's terms (`mlflow.models.MetricThreshold`): a metric of the
/// candidate version held to an absolute `threshold`, and to a change against the baseline (the
/// version the gated alias serves now) of at least `minAbsoluteChange` and `minRelativeChange`.
///
/// For a metric where greater is better (accuracy, mAP, PCK, mean IoU, agreement) the candidate
/// passes when `value >= threshold`, `value - baseline >= minAbsoluteChange` and
/// `(value - baseline) / |baseline| >= minRelativeChange`; where lower is better (latency, size,
/// memory) the signs turn: `value <= threshold`, `baseline - value >= minAbsoluteChange`. So
/// "at most 0.05 less accurate" is `minAbsoluteChange: -0.05`, and "at most 20% slower"
/// `latency_p50_ms` with `minRelativeChange: -0.2`. Without a baseline (the alias points
/// nowhere yet) only thresholds apply.
///
/// Written `METRIC:threshold=0.7,min_absolute_change=-0.05` on the command line
/// (``init(parsing:)``).
public struct HubGateRule: Codable, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The metric: one of the evaluation's (`top1`, `top5`, `classification_accuracy`, `mAP50`,
    /// `mAP50to95`, `pck`, `oks`, `mean_iou`, `pixel_accuracy`, `recall@K`), or one the hub measures beside
    /// them (``HubGateRule/hubMetrics``).
    public var metric: String
    /// The absolute bound, or `nil`.
    public var threshold: Double?
    /// The least change against the baseline, in the metric's units, or `nil`.
    public var minAbsoluteChange: Double?
    /// The least change against the baseline as a fraction of the baseline's value, or `nil`.
    public var minRelativeChange: Double?
    /// Whether a larger value is better; `nil` for the metric's own direction
    /// (``greaterIsBetter(for:)``).
    public var greaterIsBetter: Bool?

    /// The metrics the hub measures beside the evaluation's: the inference latency's median and
    /// 90th percentile in milliseconds (as `evaluate` measures it: one thread, a warm-up run),
    /// top-1 agreement with the baseline's answers (as `evaluate --compare` prints it), and the
    /// published file's size in bytes.
    public static let hubMetrics = ["latency_p50_ms", "latency_p90_ms", "agreement", "size_bytes"]

    /// Creates a rule; at least one bound must be given.
    public init(
        metric: String, threshold: Double? = nil, minAbsoluteChange: Double? = nil, minRelativeChange: Double? = nil,
        greaterIsBetter: Bool? = nil
    ) {
        self.metric = metric
        self.threshold = threshold
        self.minAbsoluteChange = minAbsoluteChange
        self.minRelativeChange = minRelativeChange
        self.greaterIsBetter = greaterIsBetter
    }

    /// Whether a larger value of `metric` is better: no for latency, sizes and memory.
    public static func greaterIsBetter(for metric: String) -> Bool {
        !(metric.hasPrefix("latency") || metric.hasSuffix("_bytes") || metric.hasSuffix("_ms"))
    }

    /// Whether a larger value is better for this rule.
    public var prefersGreater: Bool { greaterIsBetter ?? Self.greaterIsBetter(for: metric) }

    /// Parses `METRIC:key=value[,key=value...]`, the keys `threshold`, `min_absolute_change`,
    /// `min_relative_change` and `greater_is_better` (`true` or `false`), each at most once, the
    /// numbers in decimal (``isDecimal(_:)``); `recall@K`'s K as ``recallK(_:)`` reads it.
    ///
    /// - Parameter text: The rule as written.
    /// - Throws: ``HubGateRuleError`` naming what is wrong.
    public init(parsing text: String) throws(HubGateRuleError) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map {
            Self.trimmed($0)
        }
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64,
            parts[0].allSatisfy({ $0.isLetter || $0.isNumber || "_@.".contains($0) })
        else {
            throw HubGateRuleError(
                rule: text, reason: "write METRIC:threshold=0.7,min_absolute_change=-0.05 (a metric, a colon, bounds)")
        }
        if parts[0].hasPrefix("recall@"), Self.recallK(parts[0]) == nil {
            throw HubGateRuleError(
                rule: text, reason: "K of recall@K is a whole number of 1 to 100 without leading zeros (recall@5)")
        }
        self.init(metric: parts[0])
        var seen: Set<String> = []
        for pair in parts[1].split(separator: ",") {
            let keyValue = pair.split(separator: "=", maxSplits: 1).map { Self.trimmed($0) }
            guard keyValue.count == 2 else {
                throw HubGateRuleError(rule: text, reason: "\"\(pair)\" is not KEY=VALUE")
            }
            let (key, value) = (keyValue[0], keyValue[1])
            guard seen.insert(key).inserted else {
                throw HubGateRuleError(rule: text, reason: "\(key.prefix(40)) is given twice: give each key once")
            }
            if key == "greater_is_better" {
                guard let flag = Bool(value) else {
                    throw HubGateRuleError(rule: text, reason: "greater_is_better is true or false, not \"\(value)\"")
                }
                greaterIsBetter = flag
                continue
            }
            // Decimal only: Double("0x10") is 16, and "inf" or "nan" are no bounds.
            guard Self.isDecimal(value), let number = Double(value), number.isFinite, abs(number) <= 1e15 else {
                throw HubGateRuleError(
                    rule: text,
                    reason: "\(key.prefix(40))'s value \"\(value.prefix(40))\" is not a finite number, in decimal "
                        + "(-0.05, 0.85, 1e9)")
            }
            switch key {
            case "threshold": threshold = number
            case "min_absolute_change": minAbsoluteChange = number
            case "min_relative_change": minRelativeChange = number
            default:
                throw HubGateRuleError(
                    rule: text,
                    reason: "unknown key \"\(key)\" (threshold, min_absolute_change, min_relative_change, "
                        + "greater_is_better)")
            }
        }
        guard threshold != nil || minAbsoluteChange != nil || minRelativeChange != nil else {
            throw HubGateRuleError(
                rule: text, reason: "give at least one of threshold, min_absolute_change, min_relative_change")
        }
    }

    /// K of a `recall@K` metric: written in decimal without leading zeros (`recall@5`, not
    /// `recall@05` or `recall@+5`), 1 to 100; `nil` for any other metric or spelling.
    ///
    /// - Parameter metric: The metric as a rule names it.
    /// - Returns: K, or `nil`.
    public static func recallK(_ metric: String) -> Int? {
        guard metric.hasPrefix("recall@") else { return nil }
        let digits = metric.utf8.dropFirst("recall@".count)
        guard (1...3).contains(digits.count), digits.first != UInt8(ascii: "0"),
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let k = Int(Substring(digits)), (1...100).contains(k)
        else { return nil }
        return k
    }

    /// Whether `text` is a number in decimal: an optional sign, digits with an optional
    /// fraction, an optional exponent (`-0.05`, `.5`, `1e9`); no hexadecimal, `inf` or `nan`.
    static func isDecimal(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        var mantissa = digits()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            mantissa += digits()
        }
        guard mantissa > 0, mantissa <= 40 else { return false }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                bytes = bytes.dropFirst()
            }
            guard (1...3).contains(digits()) else { return false }
        }
        return bytes.isEmpty
    }

    /// The rule as ``init(parsing:)`` reads it.
    public var description: String {
        var bounds: [String] = []
        if let threshold { bounds.append("threshold=\(Self.format(threshold))") }
        if let minAbsoluteChange { bounds.append("min_absolute_change=\(Self.format(minAbsoluteChange))") }
        if let minRelativeChange { bounds.append("min_relative_change=\(Self.format(minRelativeChange))") }
        if let greaterIsBetter { bounds.append("greater_is_better=\(greaterIsBetter)") }
        return "\(metric):" + bounds.joined(separator: ",")
    }

    /// Checks a candidate's value against this rule.
    ///
    /// - Parameters:
    ///   - value: The candidate's value of ``metric``, `nil` when the evaluation gave none.
    ///   - baseline: The baseline's value, `nil` without a baseline.
    /// - Returns: Why it fails, one line per bound missed; empty when it passes.
    public func failures(value: Double?, baseline: Double?) -> [String] {
        guard let value else {
            return ["\(metric): the evaluation gave no value for it"]
        }
        let greater = prefersGreater
        var reasons: [String] = []
        let shown = Self.format(value)
        if let threshold, greater ? value < threshold : value > threshold {
            reasons.append(
                "\(metric) \(shown) is \(greater ? "below" : "above") the threshold \(Self.format(threshold))")
        }
        guard let baseline else { return reasons }
        let change = greater ? value - baseline : baseline - value
        let word = greater ? "gain" : "improvement"
        if let minAbsoluteChange, change < minAbsoluteChange {
            reasons.append(
                "\(metric) \(shown) against the baseline's \(Self.format(baseline)): a \(word) of \(Self.format(change)), "
                    + "less than min_absolute_change \(Self.format(minAbsoluteChange))")
        }
        if let minRelativeChange {
            if baseline == 0 {
                if change < 0 || minRelativeChange > 0 {
                    reasons.append(
                        "\(metric) \(shown) against the baseline's 0: a relative change is undefined, and the rule "
                            + "asks for min_relative_change \(Self.format(minRelativeChange))")
                }
            } else if change / abs(baseline) < minRelativeChange {
                reasons.append(
                    "\(metric) \(shown) against the baseline's \(Self.format(baseline)): a relative \(word) of "
                        + "\(Self.format(change / abs(baseline))), less than min_relative_change "
                        + "\(Self.format(minRelativeChange))")
            }
        }
        return reasons
    }

    /// A number for people: rounded to 4 decimals, no trailing zeros.
    public static func format(_ value: Double) -> String {
        let rounded = (value * 10_000).rounded() / 10_000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
        return "\(rounded)"
    }

    static func trimmed(_ text: Substring) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    enum CodingKeys: String, CodingKey {
        case metric, threshold
        case minAbsoluteChange = "min_absolute_change"
        case minRelativeChange = "min_relative_change"
        case greaterIsBetter = "greater_is_better"
    }
}
