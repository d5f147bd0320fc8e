"use strict";
// The streams view of serve's page, loaded after app.js (whose $, authorized, showImage and
// showAnswer it uses): the streams the server reads (serve --stream), their tab shown only when
// there is one.

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
