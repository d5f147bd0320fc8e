"use strict";
// The experiments' part of the hub's page, served in one script element after hub.js and hub-gates.js
// (HubPage): a model's experiments, each variant's figures against the baseline with its relative change's
// interval drawn, the guardrails, the history; with a key, Start, Stop and Conclude.

// The newest experiments whose figures the page asks for (one request each); older ones are only listed.
const experimentDetailLimit = 10;
// The always-valid test's decisions, for a person (the cell's title).
const decisionWords = {
  winner: "better than the baseline at the experiment's confidence", loser: "worse than the baseline at its confidence",
  continue: "not decided yet: the test goes on as events come", baseline: "what the others are compared with",
};
// The guardrails in words; a rate's figures are percentages, the latency's milliseconds.
const guardrailWords = {
  failure_rate: { name: "failure rate", rate: true }, crashes: { name: "crash rate", rate: true },
  latency_p90_ms: { name: "latency p90", rate: false }, goal_floor: { name: "goal rate", rate: true },
};

// A share as a percentage with one decimal, rounded half up ("40.0%"): the test rounds the API's figures alike.
function percent(share) {
  return (Math.floor(share * 1000 + 0.5) / 10).toFixed(1) + "%";
}

// A relative change as a signed percentage ("+12.5%", "-3.0%").
function signedPercent(change) {
  const rounded = Math.floor(change * 1000 + 0.5) / 10;
  return (rounded >= 0 ? "+" : "") + rounded.toFixed(1) + "%";
}

// Milliseconds with one decimal.
function milliseconds(value) {
  return (Math.floor(value * 10 + 0.5) / 10).toFixed(1);
}

// An SVG element: its text, like el()'s, only ever text. Its namespace is the one the HTML parser gave the svg
// of the page's template (the page holds no address of elsewhere, not even a namespace's).
function svgElement(tag, attributes, ...children) {
  const node = document.createElementNS($("svg-template").content.firstElementChild.namespaceURI, tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

// The model's experiments into the Experiments section: the running ones first and open, the others folded.
async function showExperiments(name) {
  const path = modelPath(name);
  const { experiments } = await hub(path + "/experiments");
  const ordered = experiments.filter((one) => one.status === "running")
    .concat(experiments.filter((one) => one.status !== "running"));
  const views = [];
  for (const [index, experiment] of ordered.entries()) {
    const detail = index < experimentDetailLimit ? await hub(path + "/experiments/" + experiment.id) : null;
    views.push(experimentView(name, detail ? detail.experiment : experiment, detail));
  }
  $("experiments-title").textContent = "Experiments of " + name;
  $("experiments").replaceChildren(...(views.length ? views : [el("p", { class: "muted" },
    "No experiments: start one below, or with netrunner hub experiment start.")]));
  $("experiments-section").hidden = false;
}

// "Experiment 3 on production: running", how its fold is titled.
function experimentTitle(experiment) {
  return "Experiment " + experiment.id + " on " + experiment.alias + ": " + experiment.status +
    (experiment.winner ? ", version " + experiment.winner + " won" : "");
}

// One experiment: its settings, the variants' table and chart, the guardrails, the history, its buttons.
function experimentView(name, experiment, detail) {
  const running = experiment.status === "running";
  const node = el("details", { class: "experiment " + experiment.status, "data-experiment": String(experiment.id) },
    el("summary", {}, experimentTitle(experiment)));
  node.open = running;
  node.append(el("p", { class: "experiment-meta" },
    (experiment.mode === "aa" ? "A/A test of version " + experiment.baseline : "A/B test of versions " +
      targets(experiment.variants) + ", baseline " + experiment.baseline) + "; goal " + experiment.goal +
    " at " + percent(1 - experiment.alpha) + " confidence. ",
  el("span", { class: "muted" }, "Started " + experiment.started_at + " by " + experiment.started_by +
    (experiment.ended_at ? "; ended " + experiment.ended_at + " by " + experiment.ended_by : "") + ".")));
  if (experiment.description) node.append(el("p", { class: "experiment-description muted" }, experiment.description));
  if (experiment.outcome) node.append(el("p", { class: "experiment-outcome" }, experiment.outcome));
  if (!detail) {
    node.append(el("p", { class: "muted" },
      "Its figures: netrunner hub experiment show " + name + " " + experiment.id));
    return node;
  }
  const arms = detail.analysis.arms;
  node.append(el("div", { class: "table-scroll" }, armTable(arms)),
    el("h4", {}, "Change of the goal rate against the baseline, with its 95% interval"), intervalChart(arms),
    el("h4", {}, "Guardrails"), guardrailList(experiment, arms),
    el("h4", {}, "History"), el("ol", { class: "history" }, ...detail.history.map(historyEntry)));
  if (running) node.append(experimentActions(name, experiment, arms));
  return node;
}

// "version 2", or in an A/A test, where every arm serves one version, "arm 1 (version 2)".
function armLabel(arm, arms) {
  const shared = arms.filter((other) => other.version === arm.version).length > 1;
  return shared ? "arm " + arm.arm + " (version " + arm.version + ")" : "version " + arm.version;
}

// The variants' figures, a row each; the cells carry their figure's name for the page's tests.
function armTable(arms) {
  // The goal's figures right after the version: on a narrow screen they are what must stay in view.
  const headers = ["Version", "Goal rate", "Chance to beat baseline", "Change (95% interval)", "Decision", "Weight",
    "Clients", "Events", "Failures", "Crashes", "Latency p50 / p90"];
  const rows = arms.map((arm) => {
    const compared = !arm.baseline && arm.chance_to_beat_baseline !== undefined;
    const cells = [
      ["version", arm.version + (arm.baseline ? " (baseline)" : "") +
        (armLabel(arm, arms).startsWith("arm") ? ", arm " + arm.arm : "")],
      ["goal_rate", percent(arm.goal_rate) + " of " + arm.outcomes],
      ["chance", compared ? percent(arm.chance_to_beat_baseline) : "—"],
      ["change", compared ? signedPercent(arm.relative_change) + " [" + signedPercent(arm.relative_change_lower) +
        ", " + signedPercent(arm.relative_change_upper) + "]" : "—"],
      ["decision", arm.baseline ? "baseline" : (arm.decision || "—")],
      ["weight", arm.weight + "%"], ["clients", arm.clients], ["events", arm.events],
      ["failures", percent(arm.failure_rate) + " of " + arm.inferences], ["crashes", percent(arm.crash_rate)],
      ["latency", arm.latency_p50_ms === undefined ? "—"
        : milliseconds(arm.latency_p50_ms) + " / " + milliseconds(arm.latency_p90_ms) + " ms"],
    ];
    return el("tr", { "data-version": String(arm.version), "data-arm": String(arm.arm) },
      ...cells.map(([figure, text]) => el("td", figure === "decision"
        ? { "data-figure": figure, class: "decision " + (arm.baseline ? "baseline" : arm.decision || ""),
          title: decisionWords[arm.baseline ? "baseline" : arm.decision] || "" }
        : { "data-figure": figure }, text)));
  });
  return el("table", { class: "arms" }, el("thead", {}, el("tr", {}, ...headers.map((text) => el("th", {}, text)))),
    el("tbody", {}, ...rows));
}

// Each variant's relative change against the baseline (the zero line), drawn as its 95% interval with the
// expected change marked, on one scale for all: the widest interval sets it. The coordinates are percents of
// the chart's width, so it fits any screen with its text at its own size.
function intervalChart(arms) {
  const variants = arms.filter((arm) => !arm.baseline);
  const baseline = arms.find((arm) => arm.baseline);
  const drawn = variants.filter((arm) => arm.relative_change_lower !== undefined);
  const widest = Math.max(0, ...drawn.map((arm) => Math.max(Math.abs(arm.relative_change_lower),
    Math.abs(arm.relative_change_upper))));
  const limit = niceLimit(widest * 1.05);
  const x = (change) => (50 + 50 * Math.max(-1, Math.min(1, change / limit))).toFixed(2) + "%";
  const row = 34;
  const height = variants.length * row + 26;
  const chart = svgElement("svg", { class: "intervals", width: "100%", height, role: "img",
    "aria-label": "Each variant's relative change of the goal rate against the baseline, with its 95% interval" },
  svgElement("line", { class: "zero", x1: "50%", x2: "50%", y1: 0, y2: height - 18 }));
  variants.forEach((arm, index) => {
    const top = index * row;
    const has = arm.relative_change_lower !== undefined;
    chart.append(svgElement("text", { class: "label", x: 0, y: top + 12 }, armLabel(arm, arms) + ": " +
      (has ? signedPercent(arm.relative_change) + " [" + signedPercent(arm.relative_change_lower) + ", " +
        signedPercent(arm.relative_change_upper) + "]" : "no goal outcomes yet")));
    if (!has) return;
    chart.append(svgElement("line", { class: "interval " + (arm.decision || ""), "data-version": arm.version,
      x1: x(arm.relative_change_lower), x2: x(arm.relative_change_upper), y1: top + 23, y2: top + 23 }),
    svgElement("line", { class: "estimate", x1: x(arm.relative_change), x2: x(arm.relative_change),
      y1: top + 16, y2: top + 30 }));
  });
  const axis = height - 5;
  chart.append(svgElement("text", { class: "axis", x: 0, y: axis }, axisPercent(-limit)),
    svgElement("text", { class: "axis", x: "50%", y: axis, "text-anchor": "middle" },
      "0: baseline" + (baseline ? ", version " + baseline.version : "")),
    svgElement("text", { class: "axis", x: "100%", y: axis, "text-anchor": "end" }, axisPercent(limit)));
  return chart;
}

// The chart's half width: the first round step (1, 1.5, 2... 8 times a power of ten) at or above `value`
// (10% for none).
function niceLimit(value) {
  if (!(value > 0)) return 0.1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  return [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((step) => step * power).find((step) => step >= value * (1 - 1e-9));
}

// An end of the chart's axis: "+80%", "-2.5%".
function axisPercent(change) {
  const rounded = Math.round(change * 1000) / 10;
  return (rounded >= 0 ? "+" : "") + (Number.isInteger(rounded) ? String(rounded) : rounded.toFixed(1)) + "%";
}

// Each variant's guardrails: ok or tripped, its figure against the baseline's and the margin tolerated.
function guardrailList(experiment, arms) {
  const watched = Object.keys(experiment.guardrails || {}).filter((metric) => experiment.guardrails[metric] !== null);
  if (!watched.length) return el("p", { class: "muted guardrails" }, "No guardrails: nothing stops it by itself.");
  const items = arms.filter((arm) => !arm.baseline).flatMap((arm) => {
    if (!arm.guardrails.length) {
      return [el("li", { "data-version": String(arm.version) }, armLabel(arm, arms) + ": not checked yet")];
    }
    return arm.guardrails.map((rail) => {
      const words = guardrailWords[rail.metric] || { name: rail.metric, rate: false };
      const figure = (value) => (words.rate ? percent(value) : milliseconds(value) + " ms");
      const margin = words.rate ? (Math.floor(rail.margin * 1000 + 0.5) / 10).toFixed(1) + " points"
        : format(rail.margin) + " ms";
      return el("li", { class: rail.tripped ? "tripped" : "ok", "data-version": String(arm.version),
        "data-metric": rail.metric },
      el("strong", {}, rail.tripped ? "tripped" : "ok"), " " + armLabel(arm, arms) + " " + words.name + " " +
        figure(rail.value) + " against the baseline's " + figure(rail.baseline_value) + " (" + margin +
        (rail.metric === "goal_floor" ? " lower" : " worse") + " tolerated)");
    });
  });
  return el("ul", { class: "guardrails" }, ...items);
}

// A history entry: who did what, the experiment's own actions (a guardrail's stop) marked as such. A refused
// conclusion's text ends with the way to force a move, which a conclusion has not: that part is left out.
function historyEntry(change) {
  const automatic = change.by === "experiment";
  const cut = change.action === "conclude-refused" ? change.details.indexOf(" An admin may force the move") : -1;
  const who = !automatic ? change.by + " " + change.action
    : change.action === "guardrail" ? "the experiment stopped itself" : "the experiment itself " + change.action;
  return el("li", { class: change.action + (automatic ? " automatic" : "") }, el("span", { class: "when" }, change.at),
    " " + who + ": " + (cut >= 0 ? change.details.slice(0, cut) : change.details));
}

// A running experiment's Conclude (with the hub's declared winner, or a version picked) and Stop.
function experimentActions(name, experiment, arms) {
  const winner = el("select", { class: "winner", "aria-label": "The winner to conclude with" },
    el("option", { value: "" }, "the declared winner"),
    ...[...new Set(experiment.variants.map((variant) => variant.version))].map((version) =>
      el("option", { value: String(version) }, "version " + version)));
  const conclude = el("button", { type: "button", class: "conclude" }, "Conclude…");
  const stop = el("button", { type: "button", class: "stop danger-text" }, "Stop…");
  for (const button of [conclude, stop]) button.disabled = !key;
  winner.disabled = !key;
  conclude.addEventListener("click", () => act(conclude, () => concludeExperiment(name, experiment, winner.value)));
  stop.addEventListener("click", () => act(stop, () => stopExperiment(name, experiment)));
  const declared = arms.filter((arm) => arm.decision === "winner").map((arm) => arm.version);
  return el("div", { class: "experiment-actions" }, el("label", {}, "Conclude with ", winner), conclude, stop,
    el("span", { class: "muted" }, declared.length ? " declared winner: version " + declared.join(", ")
      : experiment.mode === "aa" ? " an A/A test concludes on the baseline" : " no winner declared yet"));
}

async function stopExperiment(name, experiment) {
  const sure = await confirmChange("Stop experiment " + experiment.id + "?",
    experiment.alias + " goes back to the baseline, version " + experiment.baseline + ", for every client; the " +
    "figures stay. A stopped experiment cannot be resumed: start another.", "Stop experiment " + experiment.id);
  if (!sure) return;
  const stopped = await hub(modelPath(name) + "/experiments/" + experiment.id + "/stop", { method: "POST" });
  if (await refresh()) {
    say(name + ": experiment " + stopped.id + " stopped; " + stopped.alias + " serves version " + stopped.baseline +
      ".", true);
  }
}

// Concludes through the alias's gate: the winner promoted, or the hub's 409 (the winner has not passed the gate,
// or none is declared yet) in words for the page; a refusal is in the experiment's history, so the view is redrawn.
async function concludeExperiment(name, experiment, picked) {
  const sure = await confirmChange("Conclude experiment " + experiment.id + "?",
    (picked ? "Version " + picked : "The version the hub declared the winner (after an A/A test, the baseline)") +
    " becomes " + experiment.alias + "'s only target, if it passed " + experiment.alias + "'s gate; the " +
    "experiment ends.", "Conclude experiment " + experiment.id);
  if (!sure) return;
  let concluded;
  try {
    concluded = await hub(modelPath(name) + "/experiments/" + experiment.id + "/conclude", {
      method: "POST", body: picked ? JSON.stringify({ winner: Number(picked) }) : "",
      headers: { "Content-Type": "application/json" },
    });
  } catch (error) {
    if (error.status !== 409) throw error;
    let text = error.message;
    const forced = text.indexOf(" An admin may force the move");
    if (forced >= 0) {
      text = text.slice(0, forced) + " The experiment keeps running: stop it, or conclude it once the version " +
        "passes the gate.";
    }
    const named = text.indexOf(": name one");
    if (named >= 0) text = text.slice(0, named) + ": pick a version beside Conclude, or stop it.";
    await refresh();
    throw failure(text, error.status);
  }
  if (await refresh()) {
    say(name + ": experiment " + concluded.id + " concluded; " + (concluded.winner
      ? "version " + concluded.winner + " promoted to " + concluded.alias
      : concluded.alias + " stays on the baseline, version " + concluded.baseline) + ".", true);
  }
}

// "failure_rate=0.01 crashes=0.05" into the guardrails of the API.
function parseGuardrails(text) {
  const guardrails = {};
  for (const word of text.trim().split(/[\s,]+/).filter(Boolean)) {
    const match = /^([a-z_0-9]+)=([0-9.]+)$/.exec(word);
    if (!match || !(match[1] in guardrailWords) || !Number.isFinite(Number(match[2]))) {
      throw new Error("\"" + word + "\" is not a guardrail: failure_rate=0.01, crashes=0.05, latency_p90_ms=20 " +
        "or goal_floor=0.02.");
    }
    guardrails[match[1]] = Number(match[2]);
  }
  return guardrails;
}

// Starts an experiment on the model shown, from the Start form: the first variant is the baseline.
async function startExperiment() {
  const name = chosen;
  const alias = $("experiment-alias").value.trim();
  if (!alias) throw new Error("Name the alias the experiment runs on: production...");
  const variants = parseTargets($("experiment-variants").value).targets;
  if (!variants || variants.length < 2) throw new Error("An experiment has two variants or more: 1:50 2:50.");
  const goal = $("experiment-goal").value.trim() || "accepted";
  const body = { alias, variants, goal, guardrails: parseGuardrails($("experiment-guardrails").value),
    mode: $("experiment-aa").checked ? "aa" : "normal" };
  const started = await hub(modelPath(name) + "/experiments", {
    method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" },
  });
  for (const id of ["experiment-alias", "experiment-variants", "experiment-goal", "experiment-guardrails"]) {
    $(id).value = "";
  }
  $("experiment-aa").checked = false;
  if (await refresh()) {
    say(name + ": experiment " + started.id + " on " + started.alias + " started (" + targets(started.variants) +
      ", baseline " + started.baseline + ", goal " + started.goal + ").", true);
  }
}

$("start-experiment").addEventListener("click", () => act($("start-experiment"), startExperiment));
