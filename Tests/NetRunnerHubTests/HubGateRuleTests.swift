import NetRunnerHub
import Testing

/// The gate rules are MLflow's `MetricThreshold` (mlflow/models/evaluation/validation.py): a
/// threshold, a least absolute and a least relative change against the baseline, turned for
/// metrics where lower is better.
@Suite("Hub gate rules: MLflow's metric thresholds")
struct HubGateRuleTests {
    @Test("A rule reads as written and writes as it reads")
    func parsing() throws {
        let rule = try HubGateRule(parsing: "top1: threshold=0.7, min_absolute_change=-0.05")
        #expect(rule == HubGateRule(metric: "top1", threshold: 0.7, minAbsoluteChange: -0.05))
        #expect(rule.description == "top1:threshold=0.7,min_absolute_change=-0.05")
        #expect(try HubGateRule(parsing: rule.description) == rule)
        let latency = try HubGateRule(parsing: "latency_p50_ms:min_relative_change=-0.2")
        #expect(!latency.prefersGreater)
        let turned = try HubGateRule(parsing: "oks:threshold=0.5,greater_is_better=false")
        #expect(turned.greaterIsBetter == false && !turned.prefersGreater)
        // Decimal in its usual spellings; recall@K for K of 1 to 100.
        for (text, value) in [("-0.05", -0.05), (".5", 0.5), ("+2", 2.0), ("1e9", 1e9), ("2.5E-3", 0.0025)] {
            #expect(try HubGateRule(parsing: "size_bytes:threshold=\(text)").threshold == value, "\(text)")
        }
        #expect(try HubGateRule(parsing: "recall@100:threshold=0.5").metric == "recall@100")
        #expect(HubGateRule.recallK("recall@5") == 5 && HubGateRule.recallK("recall@+5") == nil)
        #expect(HubGateRule.recallK("recall@05") == nil && HubGateRule.recallK("top1") == nil)
    }

    @Test(
        "Unreadable rules are refused, saying why",
        arguments: [
            ("top1", "a metric, a colon, bounds"), ("top1:", "at least one of"), ("top1:threshold", "not KEY=VALUE"),
            ("top1:threshold=nan", "not a finite number"), ("top1:threshold=1e400", "not a finite number"),
            ("top1:min=0.1", "unknown key \"min\""), ("top1:greater_is_better=maybe", "true or false"),
            ("../x:threshold=1", "a metric, a colon, bounds"),
            // Issue 54: numbers in decimal only, each key once, recall@K's K as written by evaluate.
            ("top1:threshold=0x10", "not a finite number, in decimal"),
            ("top1:threshold=inf", "not a finite number, in decimal"),
            ("top1:threshold=1e", "not a finite number, in decimal"),
            ("top1:threshold=1.2.3", "not a finite number, in decimal"),
            ("top1:threshold=0.5,threshold=0.9", "threshold is given twice"),
            ("oks:threshold=0.5,greater_is_better=true,greater_is_better=false", "greater_is_better is given twice"),
            ("recall@05:threshold=0.5", "without leading zeros"), ("recall@0:threshold=0.5", "1 to 100"),
            ("recall@101:threshold=0.5", "1 to 100"), ("recall@:threshold=0.5", "1 to 100"),
        ])
    func refused(text: String, reason: String) {
        do {
            _ = try HubGateRule(parsing: text)
            Issue.record("\(text) was read")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test("Greater is better: threshold, absolute and relative change against the baseline")
    func greater() {
        let rule = HubGateRule(metric: "top1", threshold: 0.7, minAbsoluteChange: -0.05, minRelativeChange: -0.1)
        #expect(rule.failures(value: 0.80, baseline: 0.82).isEmpty)
        #expect(rule.failures(value: 0.70, baseline: nil).isEmpty, "without a baseline only the threshold applies")
        let low = rule.failures(value: 0.60, baseline: 0.875)
        #expect(low.count == 3)
        #expect(low[0] == "top1 0.6 is below the threshold 0.7")
        #expect(low[1].contains("a gain of -0.275, less than min_absolute_change -0.05"))
        #expect(low[2].contains("a relative gain of -0.3143, less than min_relative_change -0.1"))
        // MLflow's bounds are inclusive.
        #expect(HubGateRule(metric: "top1", minAbsoluteChange: -0.25).failures(value: 0.625, baseline: 0.875).isEmpty)
        #expect(rule.failures(value: nil, baseline: 0.8) == ["top1: the evaluation gave no value for it"])
    }

    @Test("Lower is better: latency may grow by at most the relative change allowed")
    func lower() {
        let rule = HubGateRule(metric: "latency_p50_ms", threshold: 20, minRelativeChange: -0.25)
        #expect(rule.failures(value: 5.0, baseline: 4.7).isEmpty, "6% slower is within 25%")
        let slow = rule.failures(value: 8.5, baseline: 4.7)
        #expect(slow.count == 1 && slow[0].contains("a relative improvement of -0.8085"), "\(slow)")
        #expect(rule.failures(value: 25, baseline: nil) == ["latency_p50_ms 25 is above the threshold 20"])
        let size = HubGateRule(metric: "size_bytes", minAbsoluteChange: 0)
        #expect(size.failures(value: 100, baseline: 100).isEmpty)
        #expect(!size.failures(value: 101, baseline: 100).isEmpty)
    }

    @Test("A baseline of 0 has no relative change: only no worse passes a rule asking for none")
    func zeroBaseline() {
        let rule = HubGateRule(metric: "mAP50", minRelativeChange: 0)
        #expect(rule.failures(value: 0.1, baseline: 0).isEmpty)
        #expect(!HubGateRule(metric: "mAP50", minRelativeChange: 0.1).failures(value: 0.1, baseline: 0).isEmpty)
    }
}
