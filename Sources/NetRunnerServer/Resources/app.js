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
  if (!model) { $("status").textContent = "no model"; return; }
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
  // The task's own route (the model list says which): /classify, /detect, /pose, /segment...
  const task = model.verb || (model.task === "detection" ? "detect" : "classify");
  const started = performance.now();
  showSeen(null);
  const reply = await fetch(`/v1/models/${encodeURIComponent(model.id)}/${task}?preview=1`,
    authorized({ method: "POST", body: form }));
  const line = await reply.json();
  record(line, performance.now() - started);
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
    showImage(entry.target, entry.target.dataset.url).catch(() => entry.target.onerror && entry.target.onerror());
  }
}) : null;
function showThumbnail(image, url) {
  if (thumbnails) { image.dataset.url = url; thumbnails.observe(image); }
  else showImage(image, url).catch(() => image.onerror && image.onerror());
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
  return result.error ? "failed" : taskCaption(result.inference_results || {}, result);
}

function showGrid(album) {
  const grid = $("album-grid");
  grid.innerHTML = "";
  for (const line of albumResults) {
    const tile = document.createElement("div");
    tile.className = "tile";
    tile.dataset.index = line.index;
    // A photo that failed has no thumbnail (it could not be decoded): "no preview", as in
    // bulk's report; so has one whose thumbnail fails to load.
    const none = document.createElement("div");
    none.className = "no-preview";
    none.textContent = "no preview";
    let image = none;
    if (!line.result.error) {
      image = document.createElement("img");
      image.loading = "lazy";
      image.alt = line.result.image;
      image.onerror = () => image.replaceWith(none);
      showThumbnail(image, `/v1/albums/${encodeURIComponent(album)}/images/${line.index}?thumbnail=1`);
    }
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
loadModels().catch((error) => showStatus("cannot list models: " + error.message));
