import FoundationEssentials
import HTTPTypes
import Hummingbird
import NIOCore
import NetRunnerSupport

/// The hub's page at `/`: what ML Kit's console was.
///
/// The models, a model's versions, its aliases with their weights and history, and its
/// adoption per version: one HTML file with its style and script, in the binary (nothing
/// fetched from elsewhere). The page reads the hub's own JSON routes (`/v1/models`,
/// `/v1/models/{name}`, `.../aliases/{alias}/history`, `.../adoption`); on a private hub it
/// asks for a key, kept in the page's memory only and sent as `Authorization: Bearer`, never
/// in an address. With a key entered (publish or admin scope: the hub decides) it also
/// changes the hub through the same API as `netrunner hub`: it uploads a version (`POST
/// .../versions?alias=`, the file as the body), points an alias at one version or several
/// with weights (`PUT .../aliases/{alias}`), and rolls an alias back (`POST .../rollback`);
/// without a key those controls are disabled and say a key is needed. Every string from the hub goes into the page as text (`textContent`), never
/// as markup, and the Content-Security-Policy allows only this script and style (by digest)
/// and requests to the hub itself.
enum HubPage {
    static func add(to router: Router<BasicRequestContext>) {
        router.get("/") { _, _ in response() }
        router.head("/") { _, _ in response() }
    }

    static func response() -> Response {
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-cache",
            .contentSecurityPolicy: policy, .xContentTypeOptions: "nosniff",
        ]
        if let referrer = HTTPField.Name("Referrer-Policy") { headers[referrer] = "no-referrer" }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// Only this page's own script and style run; it may ask only the hub.
    static let policy =
        "default-src 'none'; script-src '\(digest(script))'; style-src '\(digest(style))'; "
        + "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// A CSP source for an inline element's text: `sha256-` and its base64 digest.
    static func digest(_ text: String) -> String {
        "sha256-" + Data(SHA256.digest(of: Data(text.utf8))).base64EncodedString()
    }

    static let page =
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        + "<title>NetRunner hub</title>\n<link rel=\"icon\" href=\"data:,\">\n"
        + "<style>\(style)</style>\n</head>\n" + body + "<script>\(script)</script>\n</body>\n</html>\n"

    static let style = """

        body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #111827; background: #f9fafb; }
        header { display: flex; gap: 1em; align-items: center; padding: .6em 1.2em; background: #111827; color: #f9fafb; }
        header h1 { font-size: 1.1em; margin: 0; flex: 1; }
        header input { width: 16em; }
        main { display: grid; grid-template-columns: minmax(16em, 1fr) 2fr; gap: 1.2em; padding: 1.2em; }
        section { background: #fff; border: 1px solid #e5e7eb; border-radius: 6px; padding: .8em 1em; }
        h2 { font-size: 1em; margin: .2em 0 .6em; }
        h3 { font-size: .95em; margin: 1em 0 .4em; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .25em .5em; border-bottom: 1px solid #f3f4f6; vertical-align: top; }
        th { font-weight: 600; color: #4b5563; }
        #models tbody tr { cursor: pointer; }
        #models tbody tr:hover, #models tbody tr.chosen { background: #eff6ff; }
        .digest, .when { font-family: ui-monospace, monospace; font-size: .9em; color: #4b5563; }
        .status { color: #b91c1c; min-height: 1.4em; }
        .status { margin: .6em 1.2em 0; }
        .status.ok { color: #047857; }
        .side { display: grid; gap: 1.2em; align-content: start; min-width: 0; }
        fieldset { border: 1px solid #e5e7eb; border-radius: 4px; margin: 0 0 .8em; padding: .4em .8em .6em; min-width: 0; }
        legend { font-weight: 600; color: #374151; padding: 0 .3em; }
        fieldset label { display: flex; gap: .5em; align-items: center; margin: .3em 0; }
        fieldset label span { flex: 0 0 5em; color: #4b5563; }
        fieldset input { flex: 1; min-width: 0; max-width: 100%; }
        fieldset:disabled { opacity: .55; }
        .alias button { margin-left: .5em; font-size: .85em; }
        .bar { display: inline-block; height: .8em; background: #60a5fa; vertical-align: middle; margin-right: .4em; }
        .muted { color: #6b7280; }
        ol.history { margin: .2em 0 .8em 1.2em; padding: 0; }
        header { flex-wrap: wrap; }
        header h1 { white-space: nowrap; }
        section { min-width: 0; overflow-x: auto; }
        @media (max-width: 720px) {
          main { grid-template-columns: minmax(0, 1fr); }
          header label { flex: 1 1 100%; display: flex; gap: .5em; align-items: center; }
          header input { flex: 1; width: auto; }
        }

        """

    static let body = """
        <body>
        <header>
          <h1>NetRunner hub</h1>
          <label>Key <input id="key" type="password" autocomplete="off" placeholder="for a private hub"></label>
          <button id="use-key" type="button">Use key</button>
          <button id="reload" type="button">Reload</button>
        </header>
        <p id="status" class="status" role="status"></p>
        <main>
          <div class="side">
          <section>
            <h2>Models</h2>
            <table id="models">
              <thead><tr><th>Name</th><th>Description</th><th>Latest</th><th>Aliases</th></tr></thead>
              <tbody></tbody>
            </table>
          </section>
          <section id="manage">
            <h2>Publish</h2>
            <p id="manage-note" class="muted">A key is needed to upload versions and move aliases: \
        enter one with the publish or admin scope above.</p>
            <fieldset id="upload-controls" disabled>
              <legend>Upload a version</legend>
              <label><span>Model</span><input id="upload-name" autocomplete="off" placeholder="name, e.g. flowers"></label>
              <label><span>File</span><input id="upload-file" type="file" accept=".tflite,.zip"></label>
              <label><span>Alias</span><input id="upload-alias" autocomplete="off" placeholder="optional, e.g. staging">\
        </label>
              <button id="upload" type="button">Upload</button>
            </fieldset>
            <fieldset id="alias-controls" disabled>
              <legend>Point an alias</legend>
              <label><span>Model</span><input id="alias-model" autocomplete="off"></label>
              <label><span>Alias</span><input id="alias-name" autocomplete="off" placeholder="e.g. production"></label>
              <label><span>Versions</span><input id="alias-targets" autocomplete="off" \
        placeholder="3, or 1:90 2:10 for a staged rollout"></label>
              <button id="set-alias" type="button">Set alias</button>
              <button id="rollback" type="button">Roll back</button>
            </fieldset>
          </section>
          </div>
          <section id="model">
            <h2 id="model-name">Pick a model</h2>
            <p id="model-description" class="muted">Its versions, aliases and adoption show here.</p>
            <div id="model-details" hidden>
            <h3>Versions</h3>
            <table id="versions">
              <thead><tr><th>Version</th><th>SHA-256</th><th>Size</th><th>Task</th><th>Published</th><th>By</th></tr></thead>
              <tbody></tbody>
            </table>
            <h3>Aliases</h3>
            <div id="aliases"></div>
            <h3>Adoption</h3>
            <div id="adoption"></div>
            </div>
          </section>
        </main>

        """

    static let script = #"""

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

        """#
}
