import HTTPTypes
import Hummingbird
import NIOCore

/// Net Runner's screen as a web page at `/`: plain HTML, CSS and JavaScript in the binary (no
/// CDN, no npm: it works offline).
///
/// A model picker; the live camera (`getUserMedia`) sending frames over the `/v1/live`
/// WebSocket at a settable interval (the seeds' `delayBetweenInferencesMs`), the newest frame
/// winning; pause and resume; drop or pick a photo; the top 5 over 0.1 with bars for
/// classifiers, boxes and labels over the picture for detectors; the running average latency
/// split into decode, preprocess and inference; "what the model sees"; the model's details.
/// Settings imports a model by URL (`/v1/imports`, progress shown) and picks it; Album runs a
/// model over a folder the server was started with (`--albums`), with a progress bar, and shows
/// the results as a grid of thumbnails, any one opened with its answer (boxes drawn).
enum WebApp {
    static func add(to router: Router<BasicRequestContext>) {
        // Browsers ask for one; a small SVG spares the page a 404 in its console.
        router.get("/favicon.ico") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "max-age=86400"],
                body: .init(byteBuffer: ByteBuffer(string: icon)))
        }
        router.get("/") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
                body: .init(byteBuffer: ByteBuffer(string: page)))
        }
    }

    static let icon =
        "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><rect width='16' height='16' rx='3' "
        + "fill='#111827'/><path d='M4 12V4l8 8V4' stroke='#60a5fa' stroke-width='2' fill='none'/></svg>"

    static let page = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Net Runner</title>
        <style>
        :root { --accent: #2563eb; --muted: #6b7280; --line: #e5e7eb; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.4 system-ui, sans-serif; color: #111827; background: #f9fafb; }
        header { display: flex; gap: 12px; align-items: center; padding: 10px 16px; background: #111827; color: #fff; }
        header h1 { font-size: 18px; margin: 0 12px 0 0; }
        header select, header button { font: inherit; }
        main { display: grid; grid-template-columns: minmax(320px, 640px) minmax(280px, 1fr); gap: 16px; padding: 16px; }
        .stage { position: relative; background: #000; border-radius: 8px; overflow: hidden; min-height: 240px; }
        .stage video, .stage img.photo { display: block; width: 100%; }
        .stage canvas { position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none; }
        .stage .hint { color: #d1d5db; padding: 96px 16px; text-align: center; }
        .drop { border: 2px dashed var(--line); border-radius: 8px; padding: 12px; margin-top: 12px; text-align: center;
          color: var(--muted); }
        .drop.over { border-color: var(--accent); color: var(--accent); }
        .controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-top: 12px; }
        button { padding: 6px 12px; border: 1px solid var(--line); border-radius: 6px; background: #fff; cursor: pointer; }
        button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
        section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; margin-bottom: 12px; }
        section h2 { font-size: 14px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0 0 8px; }
        .row { display: grid; grid-template-columns: 1fr 64px; gap: 8px; align-items: center; margin: 4px 0; }
        .bar { height: 8px; background: var(--line); border-radius: 4px; overflow: hidden; }
        .bar > div { height: 100%; background: var(--accent); }
        .score { text-align: right; font-variant-numeric: tabular-nums; }
        table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
        td { padding: 2px 4px; } td:last-child { text-align: right; }
        #seen { width: 112px; height: 112px; image-rendering: pixelated; border: 1px solid var(--line); }
        pre { white-space: pre-wrap; font-size: 12px; margin: 0; }
        .error { color: #b91c1c; }
        nav button.active { background: var(--accent); color: #fff; border-color: var(--accent); }
        .view { padding: 16px; }
        [hidden] { display: none !important; }
        .wide { max-width: 960px; }
        input[type=url] { width: 100%; font: inherit; padding: 6px; border: 1px solid var(--line); border-radius: 6px; }
        progress { width: 100%; height: 14px; }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; margin-top: 12px; }
        .tile { background: #fff; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; cursor: pointer; }
        .tile img { display: block; width: 100%; height: 110px; object-fit: cover; background: #e5e7eb; }
        .tile div { padding: 4px 6px; font-size: 12px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
        .tile .failed { color: #b91c1c; }
        .tile .name { color: var(--muted); padding-bottom: 0; }
        #album-name, #stream-name { text-transform: none; letter-spacing: normal; }
        .opened { display: grid; grid-template-columns: minmax(280px, 640px) minmax(240px, 1fr); gap: 16px; margin-top: 12px; }
        </style>
        </head>
        <body>
        <header>
          <h1>Net Runner</h1>
          <nav>
            <button id="tab-live" class="active">Camera</button>
            <button id="tab-album">Album</button>
            <button id="tab-streams" hidden>Streams</button>
            <button id="tab-settings">Settings</button>
          </nav>
          <label>Model <select id="model"></select></label>
          <span id="status"></span>
        </header>
        <main id="view-live">
          <div>
            <div class="stage" id="stage">
              <video id="video" playsinline muted hidden></video>
              <img id="photo" class="photo" alt="" hidden>
              <canvas id="overlay"></canvas>
              <div class="hint" id="hint">Start the camera, or drop a photo below.</div>
            </div>
            <div class="controls">
              <button id="camera" class="primary">Start camera</button>
              <button id="pause" disabled>Pause</button>
              <label>Every <input id="interval" type="number" min="0" max="10000" step="50" value="200" size="5"> ms</label>
              <label>Threshold <input id="threshold" type="number" min="0" max="1" step="0.05" value="0.1" size="4"></label>
            </div>
            <div class="drop" id="drop">Drop a photo here, or <input id="file" type="file" accept="image/*"></div>
          </div>
          <div>
            <section><h2>Answers</h2><div id="answers"><span class="muted">No answer yet.</span></div></section>
            <section><h2>Latency (running average)</h2>
              <table><tbody>
                <tr><td>Decode</td><td id="t-decode">-</td></tr>
                <tr><td>Preprocess</td><td id="t-preprocess">-</td></tr>
                <tr><td>Inference</td><td id="t-inference">-</td></tr>
                <tr><td>Total (server)</td><td id="t-total">-</td></tr>
                <tr><td>Round trip</td><td id="t-trip">-</td></tr>
                <tr><td>Frames</td><td id="t-count">0</td></tr>
              </tbody></table>
            </section>
            <section><h2>What the model sees</h2><img id="seen" alt="the model's input"></section>
            <section><h2>Model</h2><pre id="details"></pre></section>
          </div>
        </main>
        <div class="view wide" id="view-album" hidden>
          <section><h2>Album</h2>
            <div class="controls">
              <label>Album <select id="album"></select></label>
              <button id="album-run" class="primary">Run the model over the album</button>
              <span id="album-status"></span>
            </div>
            <progress id="album-progress" max="1" value="0" hidden></progress>
          </section>
          <div class="opened" id="album-opened" hidden>
            <div class="stage"><img id="album-photo" class="photo" alt=""><canvas id="album-overlay"></canvas></div>
            <section><h2 id="album-name">Answer</h2><div id="album-answers"></div>
              <div class="controls"><button id="album-close">Back to the grid</button></div></section>
          </div>
          <div class="grid" id="album-grid"></div>
        </div>
        <div class="view wide" id="view-streams" hidden>
          <section><h2>Streams the server reads</h2>
            <div class="controls">
              <label>Stream <select id="stream"></select></label>
              <span id="stream-status" class="muted"></span>
            </div>
          </section>
          <div class="opened" id="stream-opened">
            <div class="stage"><img id="stream-frame" class="photo" alt="the stream's latest answered frame"><canvas id="stream-overlay" hidden></canvas></div>
            <section><h2 id="stream-name">Answer</h2><div id="stream-answers"><span class="muted">No answer yet.</span></div></section>
          </div>
        </div>
        <div class="view wide" id="view-settings" hidden>
          <section><h2>Import a model by URL</h2>
            <p>A zipped bundle (.tiobundle.zip, .tfbundle.zip) or a .tflite model. It is downloaded, unpacked,
              validated (its description, the model run once in a separate process), installed into the server's
              models folder and served at once.</p>
            <div class="controls" style="flex-wrap: nowrap">
              <input id="import-url" type="url" placeholder="the model's URL (a .tiobundle.zip, .tfbundle.zip or .tflite)">
              <button id="import" class="primary">Import</button>
            </div>
            <progress id="import-progress" max="1" value="0" hidden></progress>
            <p id="import-status"></p>
          </section>
        </div>
        <script>
        "use strict";
        const $ = (id) => document.getElementById(id);
        // An API key, if the server needs one, comes with the page's address: /#key=KEY.
        const apiKey = new URLSearchParams(location.hash.slice(1)).get("key");
        const authorized = (options = {}) => apiKey
          ? { ...options, headers: { ...(options.headers || {}), Authorization: "Bearer " + apiKey } } : options;
        let models = [], model = null, socket = null, stream = null, paused = false, timer = null, sentAt = 0;
        // One frame at a time: set from the frame's capture to its answer (or its socket's end).
        let waiting = false;
        const sums = { decode: 0, preprocess: 0, inference: 0, total: 0, trip: 0, count: 0 };

        async function loadModels(choose) {
          const reply = await fetch("/v1/models");
          models = (await reply.json()).models;
          const select = $("model");
          select.innerHTML = "";
          for (const m of models) {
            const option = document.createElement("option");
            option.value = m.id;
            option.textContent = `${m.name} (${m.task}${m.state === "ready" ? "" : ", " + m.state})`;
            option.disabled = m.state !== "ready";
            select.appendChild(option);
          }
          if (choose) select.value = choose;
          chooseModel(select.value);
        }

        function chooseModel(id) {
          model = models.find((m) => m.id === id) || null;
          $("details").textContent = model ? JSON.stringify(model, null, 2) : "";
          resetLatency();
          // The old model's answers and boxes go: they are not this model's.
          const none = document.createElement("span");
          none.className = "muted";
          none.textContent = "No answer yet.";
          $("answers").replaceChildren(none);
          const overlay = $("overlay");
          overlay.getContext("2d").clearRect(0, 0, overlay.width, overlay.height);
          if (stream) openSocket();
        }

        function resetLatency() {
          for (const key of Object.keys(sums)) sums[key] = 0;
          showLatency();
        }

        function record(line, trip) {
          if (line.error) return;
          sums.decode += line.decode_latency; sums.preprocess += line.preprocessor_latency;
          sums.inference += line.inference_latency; sums.total += line.total_latency;
          sums.trip += trip; sums.count += 1;
          showLatency();
        }

        function showLatency() {
          const n = sums.count;
          for (const key of ["decode", "preprocess", "inference", "total", "trip"]) {
            $("t-" + key).textContent = n ? (sums[key] / n).toFixed(1) + " ms" : "-";
          }
          $("t-count").textContent = String(n);
        }

        function showAnswer(line, width, height, answersId = "answers", canvasId = "overlay") {
          const answers = $(answersId);
          answers.innerHTML = "";
          const canvas = $(canvasId);
          const context = canvas.getContext("2d");
          canvas.width = width || canvas.clientWidth;
          canvas.height = height || canvas.clientHeight;
          context.clearRect(0, 0, canvas.width, canvas.height);
          if (line.error) {
            answers.innerHTML = "";
            const p = document.createElement("p");
            p.className = "error";
            p.textContent = line.error_description;
            answers.appendChild(p);
            return;
          }
          const threshold = parseFloat($("threshold").value) || 0;
          const results = line.inference_results || {};
          const items = (results.classification || results.detection || []).filter((c) => c.score >= threshold);
          if (!items.length) answers.textContent = "Nothing over " + threshold + ".";
          for (const item of items.slice(0, results.classification ? 5 : 100)) {
            const row = document.createElement("div");
            row.className = "row";
            const name = document.createElement("div");
            name.textContent = item.display_name || item.label || "class " + item.index;
            const bar = document.createElement("div");
            bar.className = "bar";
            const fill = document.createElement("div");
            fill.style.width = (item.score * 100).toFixed(1) + "%";
            bar.appendChild(fill);
            name.appendChild(bar);
            const score = document.createElement("div");
            score.className = "score";
            score.textContent = item.score.toFixed(3);
            row.append(name, score);
            answers.appendChild(row);
            if (item.box) {
              const [x, y, w, h] = item.box;
              context.lineWidth = Math.max(2, canvas.width / 200);
              context.strokeStyle = "#22c55e";
              context.strokeRect(x, y, w, h);
              // The label on a filled tag above the box (inside it at the top edge), readable on any picture.
              const size = Math.max(12, canvas.width / 40);
              const text = `${item.display_name || item.label || item.index} ${item.score.toFixed(2)}`;
              context.font = `${size}px system-ui`;
              const tag = { w: context.measureText(text).width + 8, h: size + 6 };
              const top = y - tag.h >= 0 ? y - tag.h : y;
              context.fillStyle = "#15803d";
              context.fillRect(x, top, tag.w, tag.h);
              context.fillStyle = "#fff";
              context.textBaseline = "middle";
              context.fillText(text, x + 4, top + tag.h / 2);
            }
          }
        }

        function liveURL() {
          const scheme = location.protocol === "https:" ? "wss:" : "ws:";
          const key = apiKey ? "&key=" + encodeURIComponent(apiKey) : "";
          return `${scheme}//${location.host}/v1/live?model=${encodeURIComponent(model.id)}&preview=1${key}`;
        }

        function openSocket() {
          if (socket) socket.close();
          waiting = false;
          if (!model) return;
          const current = socket = new WebSocket(liveURL());
          // A socket replaced (another model) or closed (camera stopped) has nothing more to say.
          current.onopen = () => {
            if (socket !== current) return;
            $("status").textContent = "live: " + model.id;
            sendFrame();
          };
          current.onclose = () => { if (socket === current || !socket) $("status").textContent = "not connected"; };
          current.onmessage = (event) => {
            if (socket !== current) return;
            waiting = false;
            const message = JSON.parse(event.data);
            const video = $("video");
            record(message.result, performance.now() - sentAt);
            showAnswer(message.result, video.videoWidth, video.videoHeight);
            if (message.input) $("seen").src = message.input;
            const delay = Math.max(0, parseInt($("interval").value, 10) || 0);
            timer = setTimeout(sendFrame, delay);
          };
        }

        function sendFrame() {
          if (!socket || socket.readyState !== WebSocket.OPEN || paused || !stream || waiting) return;
          clearTimeout(timer);
          const video = $("video");
          if (!video.videoWidth) { timer = setTimeout(sendFrame, 100); return; }
          waiting = true;
          const canvas = document.createElement("canvas");
          canvas.width = video.videoWidth;
          canvas.height = video.videoHeight;
          canvas.getContext("2d").drawImage(video, 0, 0);
          // The encoding is asynchronous: by its end the camera may be stopped, paused or
          // switched to another model's socket, and the frame is then not sent.
          const target = socket;
          canvas.toBlob((blob) => {
            if (socket !== target) return;
            if (!blob || paused || target.readyState !== WebSocket.OPEN) {
              waiting = false;
              if (!blob && !paused) timer = setTimeout(sendFrame, 100);
              return;
            }
            sentAt = performance.now();
            target.send(blob);
          }, "image/jpeg", 0.9);
        }

        async function startCamera() {
          try {
            stream = await navigator.mediaDevices.getUserMedia({ video: true, audio: false });
          } catch (error) {
            $("status").textContent = "camera: " + error.message;
            return;
          }
          const video = $("video");
          video.srcObject = stream;
          video.hidden = false;
          $("photo").hidden = true;
          $("hint").hidden = true;
          await video.play();
          $("pause").disabled = false;
          $("camera").textContent = "Stop camera";
          resetLatency();
          openSocket();
        }

        function stopCamera() {
          if (stream) for (const track of stream.getTracks()) track.stop();
          stream = null;
          if (socket) socket.close();
          socket = null;
          waiting = false;
          clearTimeout(timer);
          $("camera").textContent = "Start camera";
          $("pause").disabled = true;
        }

        async function runPhoto(file) {
          if (!file || !model) return;
          stopCamera();
          const photo = $("photo");
          photo.src = URL.createObjectURL(file);
          photo.hidden = false;
          $("video").hidden = true;
          $("hint").hidden = true;
          await photo.decode().catch(() => {});
          const form = new FormData();
          form.append("image", file, file.name);
          const task = model.task === "detection" ? "detect" : "classify";
          const started = performance.now();
          const reply = await fetch(`/v1/models/${encodeURIComponent(model.id)}/${task}`,
            authorized({ method: "POST", body: form }));
          const line = await reply.json();
          record(line, performance.now() - started);
          showAnswer(line, line.image_width || photo.naturalWidth, line.image_height || photo.naturalHeight);
        }

        // Views: the camera, an album, settings.
        function showView(name) {
          for (const view of ["live", "album", "streams", "settings"]) {
            $("view-" + view).hidden = view !== name;
            $("tab-" + view).classList.toggle("active", view === name);
          }
          window.scrollTo(0, 0);
          if (name === "album") loadAlbums();
          if (name === "streams") pollStream();
        }
        for (const view of ["live", "album", "streams", "settings"]) $("tab-" + view).onclick = () => showView(view);

        // Streams: cameras, live URLs or files the server reads (serve --stream), the latest
        // answered frame with the answer drawn by the server, polled while the view is open.
        let streamFrame = -1, streamTimer = null;
        async function loadStreams() {
          const reply = await fetch("/v1/streams", authorized());
          if (!reply.ok) return;
          const list = (await reply.json()).streams;
          $("tab-streams").hidden = list.length === 0;
          const select = $("stream");
          select.innerHTML = "";
          for (const item of list) {
            const option = document.createElement("option");
            option.value = item.name;
            option.textContent = `${item.name} (${item.source}, ${item.model})`;
            select.appendChild(option);
          }
        }
        async function pollStream() {
          clearTimeout(streamTimer);
          const name = $("stream").value;
          if (!name || $("view-streams").hidden) return;
          try {
            const reply = await fetch(`/v1/streams/${encodeURIComponent(name)}`, authorized());
            const info = await reply.json();
            $("stream-status").textContent = info.error ? info.error_description
              : `${info.state}${info.problem ? ": " + info.problem : ""}; frame ${info.frame ?? "-"}, `
                + `${info.inferred} inferred, ${info.dropped_by_interval} dropped by interval, `
                + `${info.dropped_while_busy} dropped while busy, ${info.reconnections} reconnections`;
            if (info.result && info.frame !== streamFrame) {
              streamFrame = info.frame;
              const image = $("stream-frame");
              await showImage(image, `/v1/streams/${encodeURIComponent(name)}/frame.jpg?frame=${info.frame}`);
              await image.decode().catch(() => {});
              $("stream-name").textContent = `${name}: frame ${info.frame} at ${(info.timestamp_ms / 1000).toFixed(2)} s`;
              showAnswer(info.result, image.naturalWidth, image.naturalHeight, "stream-answers", "stream-overlay");
            }
          } catch (error) {
            $("stream-status").textContent = "cannot read the stream: " + error.message;
          }
          streamTimer = setTimeout(pollStream, 250);
        }
        $("stream").onchange = () => { streamFrame = -1; pollStream(); };
        loadStreams().catch(() => {});

        // Settings: import a model by URL, follow its progress, then pick it.
        async function importModel() {
          const url = $("import-url").value.trim();
          const status = $("import-status"), progress = $("import-progress");
          status.className = "";
          if (!url) { status.textContent = "Give the model's URL."; return; }
          $("import").disabled = true;
          progress.hidden = false; progress.removeAttribute("value");
          status.textContent = "Starting…";
          try {
            const reply = await fetch("/v1/imports", authorized({ method: "POST",
              headers: { "Content-Type": "application/json" }, body: JSON.stringify({ url }) }));
            let job = await reply.json();
            if (!reply.ok) throw new Error(job.error_description);
            while (job.state !== "installed" && job.state !== "failed") {
              if (job.state === "downloading" && job.total_bytes) {
                progress.max = job.total_bytes; progress.value = job.received_bytes;
              } else { progress.removeAttribute("value"); }
              status.textContent = job.state === "downloading"
                ? `Downloading: ${(job.received_bytes / 1e6).toFixed(1)} MB` +
                  (job.total_bytes ? ` of ${(job.total_bytes / 1e6).toFixed(1)} MB` : "")
                : job.state.charAt(0).toUpperCase() + job.state.slice(1) + "…";
              await new Promise((resolve) => setTimeout(resolve, 250));
              job = await (await fetch("/v1/imports/" + job.id, authorized())).json();
            }
            if (job.state === "failed") throw new Error(job.error);
            progress.max = 1; progress.value = 1;
            status.textContent = `Imported ${job.model.name} (${job.model.id}, ${job.model.task}); it is now the model.`;
            await loadModels(job.model.id);
          } catch (error) {
            status.className = "error";
            status.textContent = error.message;
            progress.hidden = true;
          } finally {
            $("import").disabled = false;
          }
        }
        $("import").onclick = importModel;

        // Album: a folder the server was started with, the model over every photo, then the grid.
        let albums = null, albumResults = [];
        // An <img> cannot send the key (the server takes ?key= only on the live socket): with a
        // key, images are fetched with the header and shown from blob URLs, thumbnails as they
        // scroll into view.
        async function showImage(image, url) {
          if (!apiKey) { image.src = url; return; }
          const reply = await fetch(url, authorized());
          if (!reply.ok) throw new Error(`${url}: ${reply.status}`);
          const blob = URL.createObjectURL(await reply.blob());
          if (image.dataset.blob) URL.revokeObjectURL(image.dataset.blob);
          image.dataset.blob = blob;
          image.src = blob;
        }
        const thumbnails = apiKey && "IntersectionObserver" in window ? new IntersectionObserver((entries) => {
          for (const entry of entries) {
            if (!entry.isIntersecting) continue;
            thumbnails.unobserve(entry.target);
            showImage(entry.target, entry.target.dataset.url).catch(() => {});
          }
        }) : null;
        function showThumbnail(image, url) {
          if (thumbnails) { image.dataset.url = url; thumbnails.observe(image); }
          else showImage(image, url).catch(() => {});
        }
        async function loadAlbums() {
          if (albums) return;
          const reply = await fetch("/v1/albums", authorized());
          albums = (await reply.json()).albums || [];
          const select = $("album");
          select.innerHTML = "";
          for (const album of albums) {
            const option = document.createElement("option");
            option.value = album.id;
            option.textContent = `${album.name} (${album.images} photos)`;
            select.appendChild(option);
          }
          if (!albums.length) $("album-status").textContent = "No albums: start the server with --albums DIR.";
          $("album-run").disabled = !albums.length;
        }

        async function runAlbum() {
          const album = $("album").value;
          if (!album || !model) return;
          const status = $("album-status"), progress = $("album-progress");
          status.className = "";
          $("album-run").disabled = true;
          $("album-grid").innerHTML = "";
          $("album-opened").hidden = true;
          try {
            const reply = await fetch(`/v1/albums/${encodeURIComponent(album)}/runs?model=${encodeURIComponent(model.id)}`,
              authorized({ method: "POST" }));
            let run = await reply.json();
            if (!reply.ok) throw new Error(run.error_description);
            progress.hidden = false; progress.max = Math.max(1, run.total);
            while (true) {
              progress.value = run.done;
              status.textContent = `${model.id}: ${run.done} of ${run.total} photos` + (run.failed ? `, ${run.failed} failed` : "");
              if (run.state === "finished") break;
              await new Promise((resolve) => setTimeout(resolve, 250));
              run = await (await fetch(`/v1/runs/${run.id}?limit=0`, authorized())).json();
            }
            run = await (await fetch(`/v1/runs/${run.id}?limit=10000`, authorized())).json();
            albumResults = run.results;
            showGrid(album);
          } catch (error) {
            status.className = "error";
            status.textContent = error.message;
          } finally {
            $("album-run").disabled = false;
          }
        }

        function topAnswer(result) {
          if (result.error) return "failed";
          const found = result.inference_results || {};
          if (found.classification) {
            const best = found.classification[0];
            return best ? `${best.display_name || best.label} ${best.score.toFixed(2)}` : "nothing";
          }
          const count = (found.detection || []).filter((d) => d.score >= 0.5).length;
          return `${count} found`;
        }

        function showGrid(album) {
          const grid = $("album-grid");
          grid.innerHTML = "";
          for (const line of albumResults) {
            const tile = document.createElement("div");
            tile.className = "tile";
            tile.dataset.index = line.index;
            const image = document.createElement("img");
            image.loading = "lazy";
            image.alt = line.result.image;
            showThumbnail(image, `/v1/albums/${encodeURIComponent(album)}/images/${line.index}?thumbnail=1`);
            const name = document.createElement("div");
            name.className = "name";
            name.textContent = line.result.image.split("/").pop();
            const caption = document.createElement("div");
            caption.textContent = topAnswer(line.result);
            if (line.result.error) caption.className = "failed";
            caption.title = line.result.image;
            tile.append(image, name, caption);
            tile.onclick = () => openPhoto(album, line);
            grid.appendChild(tile);
          }
        }

        async function openPhoto(album, line) {
          const photo = $("album-photo");
          await showImage(photo, `/v1/albums/${encodeURIComponent(album)}/images/${line.index}`).catch(() => {});
          await photo.decode().catch(() => {});
          $("album-name").textContent = line.result.image;
          $("album-opened").hidden = false;
          showAnswer(line.result, photo.naturalWidth, photo.naturalHeight, "album-answers", "album-overlay");
          window.scrollTo(0, 0);
        }
        $("album-run").onclick = runAlbum;
        $("album-close").onclick = () => { $("album-opened").hidden = true; };

        $("model").onchange = (event) => chooseModel(event.target.value);
        $("camera").onclick = () => (stream ? stopCamera() : startCamera());
        $("pause").onclick = () => {
          paused = !paused;
          $("pause").textContent = paused ? "Resume" : "Pause";
          if (!paused) sendFrame();
        };
        $("file").onchange = (event) => {
          runPhoto(event.target.files[0]);
          event.target.value = "";  // picking the same photo again runs it again
        };
        const drop = $("drop");
        drop.ondragover = (event) => { event.preventDefault(); drop.classList.add("over"); };
        drop.ondragleave = () => drop.classList.remove("over");
        drop.ondrop = (event) => {
          event.preventDefault();
          drop.classList.remove("over");
          runPhoto(event.dataTransfer.files[0]);
        };
        loadModels().catch((error) => { $("status").textContent = "cannot list models: " + error.message; });
        </script>
        </body>
        </html>
        """#
}
