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

// The models, followed while any is loading: the page may open before the server has checked,
// loaded and warmed up every model. /v1/models is asked again with a backoff (0.5 s, doubling
// up to 5 s) until none is loading; each model is offered as soon as it is ready, and one that
// failed says why.
let modelsTimer = null, modelsDelay = 500;
async function loadModels(choose) {
  clearTimeout(modelsTimer);
  let again = false;
  try {
    const reply = await fetch("/v1/models");
    if (!reply.ok) throw new Error(`${reply.status} ${reply.statusText}`);
    models = (await reply.json()).models || [];
    showModels(choose);
    again = models.some((m) => m.state === "loading");
  } catch (error) {
    showStatus("cannot list models: " + error.message);
    again = true;  // a server starting or restarting is asked again
  }
  if (again) {
    modelsTimer = setTimeout(() => loadModels(), modelsDelay);
    modelsDelay = Math.min(modelsDelay * 2, 5000);
  } else {
    modelsDelay = 500;
  }
}

// The picker from `models`: the model chosen stays chosen while it is ready (its answers kept);
// else `choose`, else the first ready model. Those not ready are listed, disabled, with their
// state (loading, failed, unloaded); a failure's reason is its option's tooltip and a line
// under the header.
function showModels(choose) {
  const select = $("model");
  const current = choose || (model && model.id);
  select.replaceChildren();
  for (const m of models) {
    const option = document.createElement("option");
    option.value = m.id;
    option.textContent = `${m.name} (${m.task}${m.state === "ready" ? "" : ", " + m.state})`;
    option.disabled = m.state !== "ready";
    if (m.reason) option.title = m.reason;
    select.appendChild(option);
  }
  const isReady = (id) => models.some((m) => m.id === id && m.state === "ready");
  const first = models.find((m) => m.state === "ready");
  const wanted = isReady(current) ? current : first ? first.id : null;
  // None ready: the first model shows (with its state), none is chosen.
  if (wanted) select.value = wanted; else select.selectedIndex = models.length ? 0 : -1;
  showModelNotes();
  if (wanted === (model ? model.id : null)) {
    // The same model (or still none): its state and details anew, its answers kept.
    model = models.find((m) => m.id === wanted) || null;
    showDetails(model);
    showStatus();
  } else {
    chooseModel(wanted);
  }
}

// The line under the header: the models still loading, and each that failed with its reason.
function showModelNotes() {
  const lines = [];
  const loading = models.filter((m) => m.state === "loading");
  if (loading.length) {
    lines.push(["loading", `Loading ${loading.length === 1 ? "1 model" : loading.length + " models"}: `
      + loading.map((m) => m.name).join(", ") + "…"]);
  }
  for (const m of models.filter((m) => m.state === "failed")) {
    lines.push(["error", `${m.name} (${m.id}) failed to load: ${m.reason || "no reason given"}`]);
  }
  const note = $("models-note");
  note.replaceChildren(...lines.map(([kind, text]) => {
    const line = document.createElement("div");
    line.className = kind;
    line.textContent = text;
    return line;
  }));
  note.hidden = lines.length === 0;
}

function chooseModel(id) {
  model = models.find((m) => m.id === id && m.state === "ready") || null;
  showDetails(model);
  showStatus();
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

// The model panel: what a user asks of a model, one row each (the raw JSON is at /v1/models/{id}).
function showDetails(m) {
  const table = $("details");
  table.replaceChildren();
  if (!m) return;
  const tensors = (list) => (list || []).map((t) => `${t.name || "?"} ${t.dtype} [${t.shape.join(", ")}]`).join("; ");
  const p = m.preprocessing;
  const rows = [
    ["Name", m.name], ["Id", m.id], ["Task", m.task], ["Type", m.type],
    ["State", m.state + (m.reason ? ": " + m.reason : "")], ["File", m.origin],
    ["Input size", p ? `${p.width} x ${p.height}, ${p.crop === "center" ? "centre crop" : p.crop}, ${p.channel_order}` : null],
    ["Labels", m.labels != null ? String(m.labels) : null],
    ["Inputs", tensors(m.inputs) || null], ["Outputs", tensors(m.outputs) || null],
  ];
  for (const [name, value] of rows) {
    if (value == null || value === "") continue;
    const row = document.createElement("tr");
    const key = document.createElement("th");
    key.textContent = name;
    const cell = document.createElement("td");
    cell.textContent = value;
    row.append(key, cell);
    table.appendChild(row);
  }
}

// The header says what the page is doing: the camera live on a model, the camera off, or a
// live socket that closed while the camera runs ("not connected").
function showStatus(text) {
  if (text) { $("status").textContent = text; return; }
  if (!model) {
    $("status").textContent = models.some((m) => m.state === "loading") ? "models loading…" : "no model";
    return;
  }
  if (!stream) { $("status").textContent = `${model.id}: camera off`; return; }
  $("status").textContent = socket && socket.readyState === WebSocket.OPEN ? "live: " + model.id : "connecting…";
}

// "What the model sees": the input tensor of the latest answer as a picture, or nothing.
function showSeen(input) {
  const seen = $("seen");
  if (input) { seen.src = input; seen.hidden = false; $("seen-none").hidden = true; }
  else { seen.removeAttribute("src"); seen.hidden = true; $("seen-none").hidden = false; }
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
  canvas.width = width || canvas.clientWidth;
  canvas.height = height || canvas.clientHeight;
  canvas.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
  if (line.error) {
    answers.innerHTML = "";
    const p = document.createElement("p");
    p.className = "error";
    p.textContent = line.error_description;
    answers.appendChild(p);
    return;
  }
  const threshold = parseFloat($("threshold").value) || 0;
  // Each task's drawing and answers panel: tasks.js.
  showTaskAnswer(line, canvas, answers, threshold);
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
    showStatus();
    sendFrame();
  };
  current.onclose = () => { if (socket === current && stream) showStatus("not connected"); };
  current.onmessage = (event) => {
    if (socket !== current) return;
    waiting = false;
    const message = JSON.parse(event.data);
    const video = $("video");
    record(message.result, performance.now() - sentAt);
    showAnswer(message.result, video.videoWidth, video.videoHeight);
    if (message.input) showSeen(message.input);
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
  showSeen(null);
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
  showStatus();
}

// Photos that Chromium and Firefox cannot draw (HEIC, TIFF, PNM: the formats photoFormats, the
// server's table in /formats.js, says browsers do not draw) are shown as the server renders
// them (POST /v1/render: a JPEG, upright), and so is any other photo whose decoding fails in this
// browser (AVIF in an older one). The rendering keeps the photo's proportions, so the answers'
// boxes, keypoints and masks, in the photo's pixels, lie over the real picture.
const undrawn = photoFormats.filter((format) => !format.browser_draws);
const undrawnExtensions = new Set(undrawn.flatMap((format) => format.extensions));
const undrawnTypes = new Set(undrawn.flatMap((format) => format.mime_types));
function browserCannotDraw(name, type) {
  const extension = /\.([^./]+)$/.exec(name || "");
  return (extension !== null && undrawnExtensions.has(extension[1].toLowerCase()))
    || undrawnTypes.has((type || "").split(";")[0].trim().toLowerCase());
}

// An <img> showing a blob, the blob it showed before let go.
function showBlob(image, blob) {
  if (image.dataset.blob) URL.revokeObjectURL(image.dataset.blob);
  image.dataset.blob = URL.createObjectURL(blob);
  image.src = image.dataset.blob;
}

// An <img> cannot send the key (the server takes ?key= only on the live socket): with a
// key, an image is fetched with the header and shown from a blob URL (album.js's thumbnails
// as they scroll into view, streams.js's frames).
async function showImage(image, url) {
  if (!apiKey) { image.src = url; return; }
  const reply = await fetch(url, authorized());
  if (!reply.ok) throw new Error(`${url}: ${reply.status}`);
  const blob = URL.createObjectURL(await reply.blob());
  if (image.dataset.blob) URL.revokeObjectURL(image.dataset.blob);
  image.dataset.blob = blob;
  image.src = blob;
}

// Shows a picked file: as the browser draws it, else as the server renders it. Resolves to
// "browser" or "server" (nothing when `isCurrent` says another photo was picked since); throws
// the server's refusal.
async function showPicked(image, file, isCurrent) {
  if (!browserCannotDraw(file.name, file.type)) {
    showBlob(image, file);
    const drawn = await image.decode().then(() => image.naturalWidth > 0, () => false);
    if (drawn) return "browser";
  }
  if (!isCurrent()) return null;
  const form = new FormData();
  form.append("image", file, file.name);
  const reply = await fetch("/v1/render", authorized({ method: "POST", body: form }));
  if (!reply.ok) {
    const refusal = await reply.json().catch(() => ({}));
    throw new Error(refusal.error_description || `${reply.status} ${reply.statusText}`);
  }
  const rendering = await reply.blob();
  if (!isCurrent()) return null;
  showBlob(image, rendering);
  await image.decode().catch(() => {});
  return "server";
}

let picks = 0;
async function runPhoto(file) {
  if (!file) return;
  if (!model) { showStatus(models.some((m) => m.state === "loading") ? "no model ready yet" : "no model"); return; }
  stopCamera();
  const pick = ++picks;
  const isCurrent = () => pick === picks;
  const photo = $("photo"), hint = $("hint");
  photo.removeAttribute("src");
  photo.dataset.shownBy = "";
  photo.hidden = false;
  $("video").hidden = true;
  hint.hidden = true;
  showSeen(null);
  // The answer and the picture at once: the task's own route (the model list says which:
  // /classify, /detect, /pose, /segment...) while the photo is drawn or rendered.
  const task = model.verb || (model.task === "detection" ? "detect" : "classify");
  const form = new FormData();
  form.append("image", file, file.name);
  const started = performance.now();
  let trip = 0;
  const answered = fetch(`/v1/models/${encodeURIComponent(model.id)}/${task}?preview=1`,
    authorized({ method: "POST", body: form })).then((reply) => { trip = performance.now() - started; return reply.json(); });
  const shown = showPicked(photo, file, isCurrent).catch((error) => {
    if (!isCurrent()) return null;
    photo.hidden = true;
    hint.textContent = "This photo cannot be shown: " + error.message;
    hint.hidden = false;
    return null;
  });
  const [line, by] = await Promise.all([answered, shown]);
  if (!isCurrent()) return;
  if (by) photo.dataset.shownBy = by;
  record(line, trip);
  showSeen(line.input);
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

$("model").onchange = (event) => chooseModel(event.target.value);
$("camera").onclick = () => (stream ? stopCamera() : startCamera());
$("pause").onclick = () => {
  paused = !paused;
  $("pause").textContent = paused ? "Resume" : "Pause";
  if (!paused) sendFrame();
};
// The picker offers every format decoded here, by its extensions too (HEIC and AVIF have no
// image/* type on every system).
$("file").accept = ["image/*", ...photoFormats.flatMap((format) => format.extensions.map((e) => "." + e))].join(",");
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
loadModels();
