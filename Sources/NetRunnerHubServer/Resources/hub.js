"use strict";
let key = "";
let chosen = null;
// Whether the key is an admin's: null until GET /v1/keys answers (it answers only admins).
let admin = null;
// The keys as GET /v1/keys last listed them (names, scopes, dates: never a secret).
let keyList = [];
// The name of the key whose secret is on show, if one is.
let shownKey = null;
const $ = (id) => document.getElementById(id);

// An element with text children: strings from the hub are only ever text.
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function say(text, ok) {
  $("status").textContent = text;
  $("status").classList.toggle("ok", Boolean(ok));
}

// An error for the status line that keeps the hub's HTTP status.
function failure(message, status) {
  const error = new Error(message);
  error.status = status;
  return error;
}

// A request to the hub: a GET, or `options` (method, body, headers) for a change.
async function hub(path, options) {
  const headers = Object.assign(key ? { Authorization: "Bearer " + key } : {}, (options && options.headers) || {});
  const response = await fetch(path, Object.assign({ cache: "no-store" }, options || {}, { headers }));
  let body = null;
  try { body = await response.json(); } catch (error) { body = null; }
  if (response.status === 401 || response.status === 403) {
    throw failure(key ? "The key was refused: " + ((body && body.error_description) || response.status)
                      : "This hub needs a key to read: enter it above.", response.status);
  }
  if (!response.ok) {
    throw failure((body && body.error_description) || ("The hub answered " + response.status + "."), response.status);
  }
  return body;
}

function targets(list) {
  if (list.length === 1 && list[0].weight === 100) return String(list[0].version);
  return list.map((target) => target.version + " (" + target.weight + "%)").join(", ");
}

// A bar for a share (its width set through the CSSOM: the policy allows no style attribute).
function bar(share) {
  const node = el("span", { class: "bar" });
  node.style.width = Math.round(200 * share) + "px";
  return node;
}

function bytes(size) {
  if (size >= 1048576) return (size / 1048576).toFixed(1) + " MiB";
  if (size >= 1024) return (size / 1024).toFixed(1) + " KiB";
  return size + " bytes";
}

async function loadModels() {
  const { models } = await hub("/v1/models");
  const rows = models.map((model) => {
    const aliases = model.aliases.map((alias) => alias.alias + " → " + targets(alias.targets)).join(", ");
    const row = el("tr", { "data-name": model.name },
      el("td", {}, model.name), el("td", {}, model.description),
      el("td", {}, model.latest_version == null ? "" : String(model.latest_version)), el("td", {}, aliases));
    row.addEventListener("click", () => show(model.name).catch((error) => say(error.message)));
    if (model.name === chosen) row.className = "chosen";
    return row;
  });
  $("models").tBodies[0].replaceChildren(...rows);
  if (models.length === 0) {
    $("models").tBodies[0].replaceChildren(el("tr", {}, el("td", { colspan: "4", class: "muted" },
      "No models yet: netrunner hub push FILE --name NAME")));
  }
  return models;
}

async function show(name) {
  chosen = name;
  for (const row of $("models").tBodies[0].rows) row.className = row.dataset.name === name ? "chosen" : "";
  const path = "/v1/models/" + encodeURIComponent(name);
  const model = await hub(path);
  $("model-name").textContent = model.name;
  $("model-description").textContent = model.description;
  const versions = (model.versions || []).slice().reverse();
  const { gates } = await hub(path + "/gates");
  // Each version's evaluations against the gates (the newest twenty: one request each).
  const evaluations = new Map();
  if (gates.length) {
    for (const version of versions.slice(0, 20)) {
      evaluations.set(version.version, (await hub(path + "/versions/" + version.version + "/evaluations")).evaluations);
    }
  }
  // A version's row, and below it a row of its evaluations' details (folded) when it has any.
  $("versions").tBodies[0].replaceChildren(...versions.flatMap((version) => {
    const mine = evaluations.get(version.version) || [];
    // The gates right after the number: on a narrow screen they are what must stay in view.
    const row = el("tr", { "data-version": String(version.version) },
      el("td", {}, String(version.version)),
      el("td", { class: "gate-cell" }, ...mine.map((evaluation) => el("span",
        { class: "gate-badge " + evaluation.status, title: evaluation.failures.map((f) => f.reason).join("\n") },
        evaluation.alias + ": " + evaluation.status))),
      el("td", {}, version.task), el("td", {}, bytes(version.size)),
      el("td", { class: "digest", title: version.sha256 }, version.sha256.slice(0, 12)),
      el("td", { class: "when" }, version.created_at), el("td", {}, version.created_by),
      el("td", { class: "actions" }, deleteButton(name, version.version)));
    if (!mine.length) return [row];
    return [row, el("tr", { class: "evaluation-row", "data-version": String(version.version) },
      el("td", { colspan: "8" }, ...mine.map((evaluation) => gateStatus(name, evaluation))))];
  }));
  $("gates").replaceChildren(...(gates.length ? gates.map((gate) => el("div", { class: "gate" },
    el("strong", {}, gate.alias), " on " + gate.bundles.join(", ") + " (revision " + gate.revision + ", " +
      gate.updated_by + "): ",
    el("code", {}, gate.rules.map(ruleText).join("; ")))) : [el("p", { class: "muted" },
      "No gates: any version may be moved to any alias (netrunner hub gate sets one).")]));
  const aliases = [];
  for (const alias of model.aliases) {
    const { history } = await hub(path + "/aliases/" + encodeURIComponent(alias.alias) + "/history");
    aliases.push(el("div", { class: "alias", "data-alias": alias.alias },
      el("strong", { class: "alias-line" }, alias.alias + " → " + targets(alias.targets)),
      ...(alias.gate_flags ? [el("span", { class: "gate-flag" }, " " + alias.gate_flags.map(flagText).join("; "))] : []),
      el("span", { class: "muted" }, "  " + alias.updated_at + " by " + alias.updated_by),
      aliasButton("Move…", "move", () => {
        $("alias-model").value = name;
        $("alias-name").value = alias.alias;
        $("alias-targets").value = alias.targets.map((target) => target.version + ":" + target.weight).join(" ");
        $("alias-targets").focus();
      }),
      aliasButton("Roll back", "roll-back", () => rollback(name, alias.alias)),
      el("ol", { class: "history" }, ...history.slice().reverse().map((change) => el("li",
        change.action === "force" ? { class: "forced" } : {},
        el("span", { class: "when" }, change.changed_at), " " + change.changed_by + " " + change.action + ": " +
        (change.previous.length ? targets(change.previous) : "(new)") + " → " + targets(change.targets) +
        (change.action === "force" ? " — forced past its gate: " + change.reason : ""),
        ...(change.overridden ? [el("span", { class: "muted" }, " (overrode: " + change.overridden.join("; ") +
          ")")] : []))))));
  }
  $("aliases").replaceChildren(...(aliases.length ? aliases : [el("p", { class: "muted" }, "No aliases.")]));
  const adoption = (await hub(path + "/adoption")).versions;
  const total = adoption.reduce((sum, count) => sum + count.clients, 0);
  $("adoption").replaceChildren(total === 0
    ? el("p", { class: "muted" }, "No client with a key has resolved this model yet.")
    : el("table", {}, ...adoption.map((count) => el("tr", {},
        el("td", {}, "version " + count.version),
        el("td", {}, bar(count.clients / total), count.clients + (count.clients === 1 ? " client" : " clients"))))));
  await showExperiments(name);
  $("model-details").hidden = false;
  for (const id of ["upload-name", "alias-model", "gate-model"]) $(id).value = name;
  say("");
}

// The model shown no longer exists (its last version was deleted): the panel goes back to asking for one.
function forgetModel() {
  chosen = null;
  $("model-name").textContent = "Pick a model";
  $("model-description").textContent = "Its versions, aliases and adoption show here.";
  $("model-details").hidden = true;
  $("experiments-section").hidden = true;
}

// A version's Delete button: usable with a key (the hub refuses it without the admin scope).
function deleteButton(name, version) {
  const button = el("button", { type: "button", class: "delete-version", "data-version": String(version),
    title: "Delete version " + version + " (needs a key with the admin scope)" }, "Delete…");
  button.disabled = !key;
  button.addEventListener("click", () => act(button, () => deleteVersion(name, version)));
  return button;
}

// A button of an alias's line: usable only with a key.
function aliasButton(text, kind, work) {
  const button = el("button", { type: "button", class: kind }, text);
  button.disabled = !key;
  button.addEventListener("click", () => act(button, work));
  return button;
}

// Runs a change with its button disabled meanwhile; the hub's refusal goes to the status line.
async function act(button, work) {
  button.disabled = true;
  try {
    await work();
  } catch (error) {
    say(error.message);
  } finally {
    button.disabled = !key;
  }
}

function modelPath(name) {
  if (!name) throw new Error("Name the model first.");
  return "/v1/models/" + encodeURIComponent(name);
}

// "3", or "1:90 2:10" (version:weight, as netrunner hub alias takes them) into the body of the PUT.
function parseTargets(text) {
  const words = text.trim().split(/[\s,]+/).filter(Boolean);
  if (words.length === 0) throw new Error("Say which version: 3, or 1:90 2:10 for a staged rollout.");
  if (words.length === 1 && /^[0-9]+$/.test(words[0])) return { version: Number(words[0]) };
  return {
    targets: words.map((word) => {
      const match = /^([0-9]+):([0-9]+)$/.exec(word);
      if (!match) throw new Error("\"" + word + "\" is not VERSION:WEIGHT, as in 1:90 2:10.");
      return { version: Number(match[1]), weight: Number(match[2]) };
    }),
  };
}

async function upload() {
  const name = $("upload-name").value.trim();
  const file = $("upload-file").files[0];
  const alias = $("upload-alias").value.trim();
  const path = modelPath(name);
  if (!file) throw new Error("Choose a .tflite or a zipped bundle to upload.");
  say("Uploading " + file.name + " (" + bytes(file.size) + ") as " + name + "…", true);
  const query = [alias ? "alias=" + encodeURIComponent(alias) : "",
    $("upload-task-change").checked ? "allow_task_change=true" : ""].filter(Boolean).join("&");
  let version;
  try {
    version = await hub(path + "/versions" + (query ? "?" + query : ""),
      { method: "POST", body: file, headers: { "Content-Type": "application/octet-stream" } });
  } catch (error) {
    // A task change, refused: here it is the checkbox, not a command line's flag.
    const cut = error.message.indexOf(" Publish it under another name");
    if (error.status === 409 && cut >= 0) {
      throw failure(error.message.slice(0, cut) + " Upload it under another name, or tick \"another task\" " +
        "to change the model's task.", error.status);
    }
    throw error;
  }
  $("upload-task-change").checked = false;
  $("upload-file").value = "";
  chosen = name;
  if (await refresh()) {
    say("Published " + version.name + " version " + version.version + (alias ? ", " + alias + " → it" : "") + ".", true);
  }
}

async function setAlias() {
  const name = $("alias-model").value.trim();
  const alias = $("alias-name").value.trim();
  const path = modelPath(name);
  if (!alias) throw new Error("Name the alias: production, staging...");
  const reason = $("alias-force").value.trim();
  const body = JSON.stringify(Object.assign(parseTargets($("alias-targets").value),
    reason ? { force: true, reason } : {}));
  let moved;
  try {
    moved = await hub(path + "/aliases/" + encodeURIComponent(alias),
      { method: "PUT", body, headers: { "Content-Type": "application/json" } });
  } catch (error) {
    // The gate's refusal ends with the command line's way to force it; here it is the Force field.
    const cut = error.message.indexOf(" An admin may force the move");
    if (error.status === 409 && cut >= 0) {
      throw failure(error.message.slice(0, cut) + " To move it anyway, type the reason in Force and press " +
        "Move again (a key with the admin scope): the reason is kept in the alias's history.", error.status);
    }
    throw error;
  }
  chosen = name;
  // What the hub recorded: nothing changed, a move, or a move forced past the gate with its reason.
  const line = moved.unchanged
    ? moved.name + ": " + moved.alias + " already serves " + servedText(moved.targets) + "; nothing changed."
    : moved.name + ": " + moved.alias + " → " + targets(moved.targets) +
      (moved.forced ? ", forced past its gate (reason: " + moved.reason + ")." : ".");
  if (await refresh()) say(line, true);
}

// Sets an alias's gate (an admin key): every version is evaluated against it again.
async function setGate() {
  const name = $("gate-model").value.trim();
  const alias = $("gate-alias").value.trim();
  if (!alias) throw new Error("Name the alias the gate guards: production...");
  const bundles = $("gate-bundles").value.split(/[\s,]+/).filter(Boolean);
  const rules = $("gate-rules").value.split("\n").map((line) => line.trim()).filter(Boolean);
  const gate = await hub(modelPath(name) + "/gates/" + encodeURIComponent(alias), {
    method: "PUT", body: JSON.stringify({ bundles, rules }), headers: { "Content-Type": "application/json" },
  });
  chosen = name;
  if (await refresh()) {
    say(name + ": the gate on " + gate.alias + " is set (revision " + gate.revision +
      "); every version is evaluated against it.", true);
  }
}

async function rollback(name, alias) {
  const path = modelPath(name);
  if (!alias) throw new Error("Name the alias to roll back.");
  const back = await hub(path + "/aliases/" + encodeURIComponent(alias) + "/rollback", { method: "POST" });
  chosen = name;
  if (await refresh()) say(back.name + ": " + back.alias + " rolled back to " + targets(back.targets) + ".", true);
}

// Unpublishes a version after the person confirms it; what the hub refuses (an alias still pointing at it,
// a key without the admin scope) goes to the status line in the hub's words.
async function deleteVersion(name, version) {
  const path = modelPath(name);
  const sure = await confirmChange("Delete " + name + " version " + version + "?",
    "Version " + version + " of " + name + " is unpublished: it leaves the list, and " + name + "@" + version +
    " no longer resolves or downloads. Its number is never used again. The hub refuses while an alias points to it.",
    "Delete version " + version);
  if (!sure) return;
  await hub(path + "/versions/" + encodeURIComponent(version), { method: "DELETE" });
  if (await refresh()) say("Deleted " + name + " version " + version + ".", true);
}

// Asks before a change that cannot be undone, in the page's own dialog: true if the person confirms
// (Cancel, Escape and closing it are a no).
function confirmChange(title, text, action) {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = action;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
    dialog.showModal();
    $("confirm-no").focus();
  });
}

// The keys section, for an admin key only: GET /v1/keys answers admins and refuses others (403), which
// hides the section. The list holds names, scopes and dates: the hub keeps no secret to show.
async function loadKeys() {
  let keys;
  try {
    ({ keys } = await hub("/v1/keys"));
  } catch (error) {
    if (error.status !== 403) throw error;
    admin = false;
    keyList = [];
    $("keys").hidden = true;
    return;
  }
  admin = true;
  keyList = keys;
  $("key-list").tBodies[0].replaceChildren(...keys.map((entry) => el("tr", { "data-key": entry.name },
    el("td", {}, entry.name), el("td", {}, entry.scope), el("td", { class: "when" }, entry.created_at),
    el("td", { class: "actions" }, revokeButton(entry)))));
  if (keys.length === 0) {
    $("key-list").tBodies[0].replaceChildren(el("tr", {}, el("td", { colspan: "4", class: "muted" }, "No keys.")));
  }
  $("keys").hidden = false;
}

function revokeButton(entry) {
  const button = el("button", { type: "button", class: "revoke-key", title: "Revoke " + entry.name }, "Revoke…");
  button.addEventListener("click", () => act(button, () => revokeKey(entry)));
  return button;
}

// Makes a key; its secret is shown once, in the page only, until Done or another key.
async function makeKey() {
  const name = $("key-name").value.trim();
  const scope = $("key-scope").value;
  if (!name) throw new Error("Name the key after who or what uses it: ci, a laptop, a service.");
  const existing = keyList.find((entry) => entry.name === name);
  if (existing) {
    const sure = await confirmChange("Replace the key " + name + "?",
      "A key named " + name + " exists (" + existing.scope + ", made " + existing.created_at + "). Making " + name +
      " again replaces it: the old secret stops working at once." + mayBeThisPage(existing), "Replace " + name);
    if (!sure) return;
  }
  forgetNewKey();
  const made = await hub("/v1/keys", {
    method: "POST", body: JSON.stringify({ name, scope }), headers: { "Content-Type": "application/json" },
  });
  $("new-key-title").textContent = "The new key " + made.name + " (" + made.scope + "):";
  $("new-key-secret").value = made.key;
  $("new-key").hidden = false;
  shownKey = made.name;
  $("key-name").value = "";
  if (await refresh()) say("Made the key " + made.name + " (" + made.scope + "): copy it now, it is not shown again.", true);
}

// A note for a change to an admin key: it may be the one this page uses (the hub does not say whose a key is).
function mayBeThisPage(entry) {
  return entry.scope === "admin" ? " If it is the key this page uses, the page loses its access too." : "";
}

function forgetNewKey() {
  shownKey = null;
  $("copy-key").textContent = "Copy";
  $("new-key-secret").value = "";
  $("new-key").hidden = true;
}

// Copies the new key: the Clipboard API where the page may use it (https, or the hub on this machine),
// else the selected text through the older copy command.
async function copyKey() {
  const field = $("new-key-secret");
  try {
    await navigator.clipboard.writeText(field.value);
  } catch (error) {
    field.focus();
    field.select();
    if (!document.execCommand("copy")) {
      throw new Error("The browser did not let the page copy: the key is selected, copy it with Ctrl+C.");
    }
  }
  $("copy-key").textContent = "Copied";
  say("Copied the new key to the clipboard.", true);
}

async function revokeKey(entry) {
  const sure = await confirmChange("Revoke the key " + entry.name + "?",
    "Whatever uses " + entry.name + " (" + entry.scope + ") is refused from its next request on. This cannot be " +
    "undone: a key made again has a new secret." + mayBeThisPage(entry), "Revoke " + entry.name);
  if (!sure) return;
  await hub("/v1/keys/" + encodeURIComponent(entry.name), { method: "DELETE" });
  if (shownKey === entry.name) forgetNewKey();
  if (await refresh()) {
    say("Revoked the key " + entry.name + ".", true);
  } else if (admin === null) {
    // The hub no longer knows the page's key (refresh had a 401): it was this one.
    say("Revoked the key " + entry.name + ", the one this page used: the hub refuses it now. Enter another key.");
  }
}

// With a key the controls are usable (the hub still checks its scope); without one they say a key is needed.
function useKey() {
  key = $("key").value.trim();
  admin = null;
  keyList = [];
  forgetNewKey();
  $("keys").hidden = true;
  for (const id of ["upload-controls", "alias-controls", "gate-controls", "experiment-controls"]) $(id).disabled = !key;
  const buttons = ".alias button, .delete-version, .experiment-actions button, .experiment-actions select";
  for (const button of document.querySelectorAll(buttons)) button.disabled = !key;
  $("manage-note").textContent = key
    ? "Changes are made with the key entered above; it needs the publish or admin scope (admin to delete " +
      "versions and manage keys)."
    : "A key is needed to upload versions and move aliases: enter one with the publish or admin scope above " +
      "(admin to delete versions and manage keys).";
  refresh();
}

async function refresh() {
  try {
    const models = await loadModels();
    say("");
    if (chosen && models.some((model) => model.name === chosen)) await show(chosen);
    else if (chosen) forgetModel();
    // An admin key's keys; a key the hub has refused them to once is not asked again.
    if (key && admin !== false) await loadKeys();
    return true;
  } catch (error) {
    if (error.status === 401) {
      admin = null;
      $("keys").hidden = true;
    }
    say(error.message);
    return false;
  }
}

$("use-key").addEventListener("click", useKey);
$("key").addEventListener("keydown", (event) => {
  if (event.key === "Enter") useKey();
});
$("reload").addEventListener("click", refresh);
$("upload").addEventListener("click", () => act($("upload"), upload));
$("set-alias").addEventListener("click", () => act($("set-alias"), setAlias));
$("set-gate").addEventListener("click", () => act($("set-gate"), setGate));
$("rollback").addEventListener("click", () =>
  act($("rollback"), () => rollback($("alias-model").value.trim(), $("alias-name").value.trim())));
$("make-key").addEventListener("click", () => act($("make-key"), makeKey));
$("key-name").addEventListener("keydown", (event) => {
  if (event.key === "Enter") act($("make-key"), makeKey);
});
$("copy-key").addEventListener("click", () => act($("copy-key"), copyKey));
$("new-key-done").addEventListener("click", forgetNewKey);
$("confirm-yes").addEventListener("click", () => $("confirm").close("yes"));
$("confirm-no").addEventListener("click", () => $("confirm").close("no"));
refresh();
