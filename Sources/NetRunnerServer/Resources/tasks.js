"use strict";
// How the page shows each task's answer, from its results line: a classifier's top 5 with bars,
// a detector's boxes and labels, a pose estimator's keypoints joined by the skeleton's bones, a
// segmenter's category mask as a coloured overlay with a legend of its classes, an embedder's
// vector as a strip of shades with its cosine similarity to the embedding shown before it. Loaded before
// app.js, which calls showTaskAnswer (the camera, a photo, the album, the streams) and
// taskCaption (the album's tiles).

// The annotator's palette (Annotator.palette): class i is palette[i % 12], on the page as in
// `--annotate`'s pictures and the frames the server draws for its streams.
const palette = [[230, 25, 75], [60, 180, 75], [0, 130, 200], [245, 130, 48], [145, 30, 180], [70, 240, 240],
  [240, 50, 230], [210, 245, 60], [250, 190, 212], [0, 128, 128], [220, 190, 255], [170, 110, 40]];
const colorOf = (index) => palette[((index % palette.length) + palette.length) % palette.length];
const css = (rgb) => `rgb(${rgb[0]}, ${rgb[1]}, ${rgb[2]})`;

// MoveNet's bones, for an answer that does not list its own (the server's has `skeleton`).
const movenetSkeleton = [[0, 1], [0, 2], [1, 3], [2, 4], [0, 5], [0, 6], [5, 7], [7, 9], [6, 8], [8, 10], [5, 6],
  [5, 11], [6, 12], [11, 12], [11, 13], [13, 15], [12, 14], [14, 16]];

// One row of the answers panel: a name (with a colour swatch, for a mask's class), a bar and a
// number, as app.js writes a classifier's.
function answerRow(label, fraction, number, color) {
  const row = document.createElement("div");
  row.className = "row";
  const name = document.createElement("div");
  name.textContent = label;
  if (color) name.style.borderLeft = `12px solid ${css(color)}`;
  if (color) name.style.paddingLeft = "6px";
  const bar = document.createElement("div");
  bar.className = "bar";
  const fill = document.createElement("div");
  fill.style.width = (Math.max(0, Math.min(1, fraction)) * 100).toFixed(1) + "%";
  if (color) fill.style.background = css(color);
  bar.appendChild(fill);
  name.appendChild(bar);
  const score = document.createElement("div");
  score.className = "score";
  score.textContent = number;
  row.append(name, score);
  return row;
}

// The keypoints over the threshold, each a dot, joined by the bones whose two ends are shown.
function drawPose(line, canvas, answers, threshold) {
  const keypoints = line.inference_results.pose;
  const shown = (point) => point && point.score >= threshold && isFinite(point.x) && isFinite(point.y);
  const context = canvas.getContext("2d");
  const size = Math.min(canvas.width, canvas.height);
  context.lineCap = "round";
  context.lineWidth = Math.max(3, size / 120);
  (line.skeleton || movenetSkeleton).forEach(([from, to], index) => {
    const a = keypoints[from], b = keypoints[to];
    if (!shown(a) || !shown(b)) return;
    context.strokeStyle = css(colorOf(index));
    context.beginPath();
    context.moveTo(a.x, a.y);
    context.lineTo(b.x, b.y);
    context.stroke();
  });
  const radius = Math.max(4, size / 90);
  context.lineWidth = Math.max(1.5, radius / 3);
  context.fillStyle = "#fff";
  context.strokeStyle = "#111827";
  for (const point of keypoints.filter(shown)) {
    context.beginPath();
    context.arc(point.x, point.y, radius, 0, 2 * Math.PI);
    context.fill();
    context.stroke();
  }
  const listed = keypoints.filter((point) => point.score >= threshold);
  if (!listed.length) answers.textContent = "No keypoint over " + threshold + ".";
  for (const point of listed) answers.appendChild(answerRow(point.name, point.score, point.score.toFixed(3)));
}

// Each canvas's latest mask: one decoded after a newer answer was drawn is not drawn.
const masksDrawn = new WeakMap();

// The image's pixels: the areas count them, whatever the mask's resolution.
function imagePixels(line, mask) {
  return Math.max(1, (line.image_width || mask.width || 0) * (line.image_height || mask.height || 0));
}

// The mask (a grayscale PNG, each pixel's value its class) as a half-transparent overlay in the
// classes' colours, the background (class 0) and unknown pixels (255) left clear; the legend
// lists the classes found with the share of the image each covers. The mask covers the whole
// image at its own size (serve's default: the model's output resolution, 513 x 513 for
// DeepLab, whatever the photo's), so it is coloured at that size, then scaled onto the canvas
// (the image's size) by nearest neighbour, as the server scales it for mask=image.
function drawSegmentation(line, canvas, answers) {
  const segmentation = line.inference_results.segmentation;
  const mask = segmentation.mask || {};
  const total = imagePixels(line, mask);
  const classes = (segmentation.areas || []).filter((area) => area.index !== 0 && area.pixels / total >= 0.001);
  if (!classes.length) answers.textContent = "Nothing but background.";
  for (const area of classes) {
    const share = area.pixels / total;
    answers.appendChild(answerRow(area.label || "class " + area.index, share, (share * 100).toFixed(1) + "%",
      colorOf(area.index)));
  }
  if (mask.encoding !== "png" || !mask.width || !mask.height) return;
  const token = {};
  masksDrawn.set(canvas, token);
  const image = new Image();
  image.onload = () => {
    if (masksDrawn.get(canvas) !== token) return;
    const scratch = document.createElement("canvas");
    scratch.width = mask.width;
    scratch.height = mask.height;
    const context = scratch.getContext("2d");
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, mask.width, mask.height);
    const data = pixels.data;
    for (let i = 0; i < data.length; i += 4) {
      const index = data[i];
      if (index === 0 || index === 255) { data[i + 3] = 0; continue; }
      const [red, green, blue] = colorOf(index);
      data[i] = red; data[i + 1] = green; data[i + 2] = blue; data[i + 3] = 140;
    }
    context.putImageData(pixels, 0, 0);
    const target = canvas.getContext("2d");
    target.imageSmoothingEnabled = false;
    target.drawImage(scratch, 0, 0, canvas.width, canvas.height);
  };
  image.src = "data:image/png;base64," + mask.data;
}

// The embedding each answers panel showed last: the next one on the panel is compared with it
// (pick a photo, then another; or watch the camera's frames drift).
const embeddingsShown = new WeakMap();

// An embedding's values: MediaPipe's float_embedding, else its quantized bytes over 128.
function embeddingValues(embedding) {
  return embedding.float_embedding || (embedding.quantized_embedding || []).map((value) => value / 128);
}

// The cosine similarity of two vectors of one length, or null.
function cosineSimilarity(u, v) {
  if (!u || !v || u.length !== v.length || !u.length) return null;
  let dot = 0, uu = 0, vv = 0;
  for (let i = 0; i < u.length; i++) { dot += u[i] * v[i]; uu += u[i] * u[i]; vv += v[i] * v[i]; }
  return uu > 0 && vv > 0 ? dot / Math.sqrt(uu * vv) : null;
}

// An embedder's answer: nothing is drawn on the picture; the panel gives the vector's size and
// length, its values as a strip (white 0, darker larger, one column each, at most 1024), and
// its cosine similarity with the embedding this panel showed before, when there is one.
function drawEmbedding(line, answers) {
  const values = embeddingValues(line.inference_results.embedding);
  const length = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0));
  const size = document.createElement("div");
  size.className = "embedding-size";
  size.textContent = `${values.length} values, length ${length.toFixed(4)}`;
  const strip = document.createElement("canvas");
  strip.className = "embedding-strip";
  strip.width = Math.max(1, Math.min(values.length, 1024));
  strip.height = 1;
  strip.style.cssText = "width: 100%; height: 18px; image-rendering: pixelated; border: 1px solid var(--line)";
  const largest = values.reduce((most, value) => Math.max(most, Math.abs(value)), 0) || 1;
  const pixels = strip.getContext("2d").createImageData(strip.width, 1);
  for (let x = 0; x < strip.width; x++) {
    const shade = 255 - Math.round(255 * Math.abs(values[Math.floor(x * values.length / strip.width)]) / largest);
    pixels.data.set([shade, shade, 255 - (255 - shade) / 3, 255], x * 4);
  }
  strip.getContext("2d").putImageData(pixels, 0, 0);
  answers.append(size, strip);
  const similarity = cosineSimilarity(embeddingsShown.get(answers), values);
  if (similarity !== null) {
    answers.appendChild(answerRow("cosine with the previous image", similarity, similarity.toFixed(4)));
  }
  embeddingsShown.set(answers, values);
}

// A classifier's labels with bars (its top 5) or a detector's boxes, each with a tag.
function drawLabelsAndBoxes(line, canvas, answers, threshold) {
  const results = line.inference_results || {};
  const context = canvas.getContext("2d");
  const items = (results.classification || results.detection || []).filter((c) => c.score >= threshold);
  if (!items.length) answers.textContent = "Nothing over " + threshold + ".";
  for (const item of items.slice(0, results.classification ? 5 : 100)) {
    answers.appendChild(answerRow(item.display_name || item.label || "class " + item.index, item.score,
      item.score.toFixed(3)));
    if (!item.box) continue;
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

// Shows an answer on a canvas (already cleared, at the image's size) and in the answers panel.
function showTaskAnswer(line, canvas, answers, threshold) {
  const results = line.inference_results || {};
  masksDrawn.delete(canvas);
  if (results.pose) drawPose(line, canvas, answers, threshold);
  else if (results.segmentation) drawSegmentation(line, canvas, answers);
  else if (results.embedding) drawEmbedding(line, answers);
  else drawLabelsAndBoxes(line, canvas, answers, threshold);
}

// An album tile's caption: the best label, the boxes found, the pose's mean score, the largest
// class (its share of the image: `line`, the results line, has the image's size), an
// embedding's size.
function taskCaption(results, line = {}) {
  if (results.embedding) return `embedding, ${embeddingValues(results.embedding).length} values`;
  if (results.pose) {
    const scores = results.pose.map((point) => point.score);
    const mean = scores.reduce((sum, score) => sum + score, 0) / Math.max(1, scores.length);
    return `pose ${mean.toFixed(2)}, ${scores.filter((score) => score >= 0.2).length} keypoints`;
  }
  if (results.segmentation) {
    const total = imagePixels(line, results.segmentation.mask || {});
    const best = (results.segmentation.areas || []).find((area) => area.index !== 0);
    return best ? `${best.label || "class " + best.index} ${(best.pixels / total * 100).toFixed(0)}%` : "background";
  }
  if (results.classification) {
    const best = results.classification[0];
    return best ? `${best.display_name || best.label} ${best.score.toFixed(2)}` : "nothing";
  }
  return `${(results.detection || []).filter((d) => d.score >= 0.5).length} found`;
}
