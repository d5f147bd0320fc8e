"use strict";
// The gates' part of the hub's page, served in one script element after hub.js (HubPage): a
// version's standing with a gate, the flags of an alias pointing past its gate, rules as text.

// A version a gated alias points to without having passed its gate (a forced move, or a node of
// an older release that knew no gates), as `netrunner hub show` words it.
function flagText(flag) {
  if (flag.status === "failed") return "version " + flag.version + " failed its gate";
  if (flag.status === "pending") return "version " + flag.version + "'s evaluation is pending";
  return "version " + flag.version + " has not been evaluated against its gate";
}

// A rule as `netrunner hub gate --rule` writes it.
function ruleText(rule) {
  const bounds = [["threshold", rule.threshold], ["min_absolute_change", rule.min_absolute_change],
    ["min_relative_change", rule.min_relative_change], ["greater_is_better", rule.greater_is_better]]
    .filter(([, value]) => value !== undefined && value !== null).map(([key, value]) => key + "=" + value);
  return rule.metric + ":" + bounds.join(",");
}

// A version's standing with one alias's gate, folded: the rules it missed, per test bundle its
// metrics beside the baseline's, and the report.
function gateStatus(name, evaluation) {
  const parts = [];
  for (const [bundle, metrics] of Object.entries(evaluation.metrics)) {
    const base = evaluation.baseline_metrics[bundle] || {};
    parts.push(el("table", { class: "metrics" },
      el("caption", {}, bundle + " ", el("a", {
        href: modelPath(name) + "/versions/" + evaluation.version + "/evaluations/" +
          encodeURIComponent(evaluation.alias) + "/" + encodeURIComponent(bundle), target: "_blank", rel: "noopener",
      }, "report")),
      el("thead", {}, el("tr", {}, el("th", {}, "Metric"), el("th", {}, "This version"),
        el("th", {}, evaluation.baseline ? "Baseline (" + evaluation.baseline + ")" : "Baseline"))),
      el("tbody", {}, ...Object.keys(metrics).sort().map((key) => el("tr", {}, el("td", {}, key),
        el("td", {}, format(metrics[key])), el("td", {}, key in base ? format(base[key]) : ""))))));
  }
  const missed = evaluation.failures.length;
  return el("details", { class: "gate-status " + evaluation.status },
    el("summary", {}, "Gate of " + evaluation.alias + ": " + evaluation.status +
      (evaluation.baseline ? " against version " + evaluation.baseline : "") +
      (missed ? ", " + missed + (missed === 1 ? " rule" : " rules") + " missed" : "")),
    ...(missed ? [el("ul", { class: "failures" },
      ...evaluation.failures.map((failure) => el("li", {}, failure.reason + " (" + failure.bundle + ")")))] : []),
    ...(evaluation.message ? [el("p", { class: "muted" }, evaluation.message)] : []),
    el("div", { class: "metric-tables" }, ...parts));
}

// A metric for people: up to 4 decimals.
function format(value) {
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 10000) / 10000);
}

// "version 2", or "versions 1 (90%), 2 (10%)" for a staged rollout.
function servedText(list) {
  return (list.length === 1 ? "version " : "versions ") + targets(list);
}
