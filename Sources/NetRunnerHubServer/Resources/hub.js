"use strict";
let key = "";
let chosen = null;
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

// A request to the hub: a GET, or `options` (method, body, headers) for a change.
async function hub(path, options) {
  const headers = Object.assign(key ? { Authorization: "Bearer " + key } : {}, (options && options.headers) || {});
  const response = await fetch(path, Object.assign({ cache: "no-store" }, options || {}, { headers }));
  let body = null;
  try { body = await response.json(); } catch (error) { body = null; }
  if (response.status === 401 || response.status === 403) {
    throw new Error(key ? "The key was refused: " + ((body && body.error_description) || response.status)
                        : "This hub needs a key to read: enter it above.");
  }
  if (!response.ok) {
    throw new Error((body && body.error_description) || ("The hub answered " + response.status + "."));
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
  $("versions").tBodies[0].replaceChildren(...versions.map((version) => el("tr", {},
    el("td", {}, String(version.version)), el("td", { class: "digest", title: version.sha256 },
      version.sha256.slice(0, 12)), el("td", {}, bytes(version.size)), el("td", {}, version.task),
    el("td", { class: "when" }, version.created_at), el("td", {}, version.created_by))));
  const aliases = [];
  for (const alias of model.aliases) {
    const { history } = await hub(path + "/aliases/" + encodeURIComponent(alias.alias) + "/history");
    aliases.push(el("div", { class: "alias", "data-alias": alias.alias },
      el("strong", { class: "alias-line" }, alias.alias + " → " + targets(alias.targets)),
      el("span", { class: "muted" }, "  " + alias.updated_at + " by " + alias.updated_by),
      aliasButton("Move…", "move", () => {
        $("alias-model").value = name;
        $("alias-name").value = alias.alias;
        $("alias-targets").value = alias.targets.map((target) => target.version + ":" + target.weight).join(" ");
        $("alias-targets").focus();
      }),
      aliasButton("Roll back", "roll-back", () => rollback(name, alias.alias)),
      el("ol", { class: "history" }, ...history.slice().reverse().map((change) => el("li", {},
        el("span", { class: "when" }, change.changed_at), " " + change.changed_by + " " + change.action + ": " +
        (change.previous.length ? targets(change.previous) : "(new)") + " → " + targets(change.targets))))));
  }
  $("aliases").replaceChildren(...(aliases.length ? aliases : [el("p", { class: "muted" }, "No aliases.")]));
  const adoption = (await hub(path + "/adoption")).versions;
  const total = adoption.reduce((sum, count) => sum + count.clients, 0);
  $("adoption").replaceChildren(total === 0
    ? el("p", { class: "muted" }, "No client with a key has resolved this model yet.")
    : el("table", {}, ...adoption.map((count) => el("tr", {},
        el("td", {}, "version " + count.version),
        el("td", {}, bar(count.clients / total), count.clients + (count.clients === 1 ? " client" : " clients"))))));
  $("model-details").hidden = false;
  for (const id of ["upload-name", "alias-model"]) $(id).value = name;
  say("");
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
  const version = await hub(path + "/versions" + (alias ? "?alias=" + encodeURIComponent(alias) : ""),
    { method: "POST", body: file, headers: { "Content-Type": "application/octet-stream" } });
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
  const body = JSON.stringify(parseTargets($("alias-targets").value));
  const moved = await hub(path + "/aliases/" + encodeURIComponent(alias),
    { method: "PUT", body, headers: { "Content-Type": "application/json" } });
  chosen = name;
  if (await refresh()) say(moved.name + ": " + moved.alias + " → " + targets(moved.targets) + ".", true);
}

async function rollback(name, alias) {
  const path = modelPath(name);
  if (!alias) throw new Error("Name the alias to roll back.");
  const back = await hub(path + "/aliases/" + encodeURIComponent(alias) + "/rollback", { method: "POST" });
  chosen = name;
  if (await refresh()) say(back.name + ": " + back.alias + " rolled back to " + targets(back.targets) + ".", true);
}

// With a key the controls are usable (the hub still checks its scope); without one they say a key is needed.
function useKey() {
  key = $("key").value.trim();
  for (const id of ["upload-controls", "alias-controls"]) $(id).disabled = !key;
  for (const button of document.querySelectorAll(".alias button")) button.disabled = !key;
  $("manage-note").textContent = key
    ? "Changes are made with the key entered above; it needs the publish or admin scope."
    : "A key is needed to upload versions and move aliases: enter one with the publish or admin scope above.";
  refresh();
}

async function refresh() {
  try {
    const models = await loadModels();
    say("");
    if (chosen && models.some((model) => model.name === chosen)) await show(chosen);
    return true;
  } catch (error) {
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
$("rollback").addEventListener("click", () =>
  act($("rollback"), () => rollback($("alias-model").value.trim(), $("alias-name").value.trim())));
refresh();
