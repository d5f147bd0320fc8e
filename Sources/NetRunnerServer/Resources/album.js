"use strict";
// The album view of serve's page, loaded after app.js (whose $, authorized, showImage,
// browserCannotDraw and showAnswer it uses; tasks.js's taskCaption too): a folder the server
// was started with (--albums), a run of the model over every photo with its progress, the grid
// of thumbnails, and a photo opened with its answer drawn.

// Album: a folder the server was started with, the model over every photo, then the grid.
let albums = null, albumResults = [];
// With a key, thumbnails are fetched (showImage) as they scroll into view.
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
      // The run's latency per stage is bulk's summary (GET /v1/runs/{id}'s latency).
      const inference = (run.latency || {}).inference;
      status.textContent = `${model.id}: ${run.done} of ${run.total} photos` + (run.failed ? `, ${run.failed} failed` : "")
        + (inference ? `; inference ${inference.mean.toFixed(1)} ms mean, p90 ${inference.p90.toFixed(1)}` : "");
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

// An album's photo, opened: as the browser draws the file, else (HEIC, TIFF, or a file whose
// decoding fails here) as the server renders it (?render=jpeg), so the answer's drawing lies
// over the real picture.
let opened = 0;
async function openPhoto(album, line) {
  const photo = $("album-photo");
  const url = `/v1/albums/${encodeURIComponent(album)}/images/${line.index}`;
  const open = ++opened;
  const shows = (source) => showImage(photo, source).then(() => photo.decode()).then(() => photo.naturalWidth > 0);
  let by = "browser";
  if (browserCannotDraw(line.result.image) || !(await shows(url).catch(() => false))) {
    if (open !== opened) return;
    by = "server";
    await shows(url + "?render=jpeg").catch(() => false);
  }
  if (open !== opened) return;
  photo.dataset.shownBy = by;
  $("album-name").textContent = line.result.image;
  $("album-opened").hidden = false;
  // The answer is in the photo's pixels (a rendering of a large photo is smaller).
  showAnswer(line.result, line.result.image_width || photo.naturalWidth, line.result.image_height || photo.naturalHeight,
    "album-answers", "album-overlay");
  window.scrollTo(0, 0);
}
$("album-run").onclick = runAlbum;
$("album-close").onclick = () => { $("album-opened").hidden = true; };
