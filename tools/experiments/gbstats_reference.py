"""GrowthBook's stats engine (gbstats 0.8.0) on the cases given as JSON in argv[1]; prints one
JSON result per case, in order. Run by Tests/NetRunnerHubServerTests/ExperimentStatisticsTests.swift
in .venv-stats (scripts/setup-stats-python.sh).

A case: {"kind": "binomial", "a": [users, conversions], "b": [...], "inverse": false}, or
{"kind": "mean", "a": [n, sum, sum_squares], "b": [...]}, or {"kind": "quantile", "nu": 0.9,
"a": [n, estimate, lower, upper], "b": [...]}; with "sequential": {"tuning": 5000,
"test_value": 0} the sequential test on the absolute difference runs too.
"""
import json
import sys
from importlib.metadata import version

from gbstats.bayesian.tests import EffectBayesianABTest, EffectBayesianConfig
from gbstats.frequentist.tests import SequentialConfig, SequentialTwoSidedTTest
from gbstats.models.statistics import ProportionStatistic, QuantileStatistic, SampleMeanStatistic

assert version("gbstats") == "0.8.0", version("gbstats")


def statistic(kind, figures, nu):
    if kind == "binomial":
        return ProportionStatistic(n=figures[0], sum=figures[1])
    if kind == "mean":
        return SampleMeanStatistic(n=figures[0], sum=figures[1], sum_squares=figures[2])
    n, estimate, lower, upper = figures
    return QuantileStatistic(
        n=n, n_star=n, nu=nu, quantile_hat=estimate, quantile_lower=lower, quantile_upper=upper
    )


results = []
for case in json.loads(sys.argv[1]):
    a = statistic(case["kind"], case["a"], case.get("nu"))
    b = statistic(case["kind"], case["b"], case.get("nu"))
    bayes = EffectBayesianABTest(a, b, EffectBayesianConfig(inverse=case.get("inverse", False))).compute_result()
    result = {
        "chance_to_win": bayes.chance_to_win,
        "expected": bayes.expected,
        "ci": bayes.ci,
        "risk": bayes.risk,
        "error": bayes.error_message,
    }
    if "sequential" in case:
        settings = case["sequential"]
        config = SequentialConfig(
            difference_type="absolute",
            sequential_tuning_parameter=settings["tuning"],
            test_value=settings["test_value"],
        )
        sequential = SequentialTwoSidedTTest(a, b, config).compute_result()
        result["p_value"] = sequential.p_value
        result["sequential_ci"] = sequential.ci
        result["sequential_expected"] = sequential.expected
    results.append(result)
print(json.dumps(results))
