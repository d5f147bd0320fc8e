"use strict";
const entries = JSON.parse(document.getElementById("data").textContent);
const grid = document.getElementById("grid");
const labels = new Set();
const text = (tag, content, cls) => { const e = document.createElement(tag); e.textContent = content;
  if (cls) e.className = cls; return e; };
entries.forEach((entry, index) => {
  const best = entry.answers[0];
  for (const answer of entry.answers) labels.add(answer.label);
  const figure = document.createElement("figure");
  figure.dataset.index = index;
  if (entry.error) figure.className = "failed";
  if (entry.thumbnail) { const img = document.createElement("img"); img.loading = "lazy"; img.src = entry.thumbnail;
    img.alt = entry.image; figure.appendChild(img); } else { figure.appendChild(text("div", "no preview", "none")); }
  const caption = document.createElement("figcaption");
  caption.appendChild(text("b", entry.error ? "failed" : best ? `${best.label} ${best.score.toFixed(3)}` : "nothing found"));
  caption.appendChild(text("div", entry.image.split("/").pop(), "name"));
  figure.title = entry.image;
  figure.appendChild(caption);
  figure.onclick = () => open(index);
  grid.appendChild(figure);
});
const list = document.getElementById("labels");
// Labels as the images are ordered (by the page): numbers as numbers ("class 2" before "class 10"), any case.
const natural = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
for (const label of [...labels].sort(natural.compare)) {
  const o = document.createElement("option"); o.value = label; list.appendChild(o); }
function filter() {
  const wanted = document.getElementById("label").value.trim().toLowerCase();
  const minimum = parseFloat(document.getElementById("score").value);
  const failedOnly = document.getElementById("failed").checked;
  document.getElementById("scoreValue").textContent = minimum.toFixed(2);
  let shown = 0;
  for (const figure of grid.children) {
    const entry = entries[figure.dataset.index];
    const matching = entry.answers.filter((a) => (!wanted || a.label.toLowerCase().includes(wanted)) && a.score >= minimum);
    const visible = failedOnly ? !!entry.error : (!wanted && minimum === 0) || matching.length > 0;
    figure.hidden = !visible;
    if (visible) shown += 1;
  }
  document.getElementById("count").textContent = `${shown} shown`;
}
for (const id of ["label", "score", "failed"]) document.getElementById(id).oninput = filter;
function open(index) {
  const entry = entries[index];
  const panel = document.getElementById("panel");
  panel.replaceChildren(text("h2", entry.image));
  if (entry.thumbnail) {
    const stage = document.createElement("div"); stage.className = "stage";
    const img = document.createElement("img"); img.src = entry.thumbnail; stage.appendChild(img);
    if (entry.width && entry.height && entry.answers.some((a) => a.box)) {
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      svg.setAttribute("viewBox", `0 0 ${entry.width} ${entry.height}`);
      for (const a of entry.answers.filter((a) => a.box)) {
        const rect = document.createElementNS(svg.namespaceURI, "rect");
        const [x, y, w, h] = a.box;
        Object.entries({ x, y, width: w, height: h, fill: "none", stroke: "#e5534b",
          "stroke-width": Math.max(2, entry.width / 200) }).forEach(([k, v]) => rect.setAttribute(k, v));
        svg.appendChild(rect);
      }
      stage.appendChild(svg);
    }
    panel.appendChild(stage);
  }
  if (entry.error) panel.appendChild(text("p", entry.error));
  const table = document.createElement("table");
  for (const a of entry.answers) { const row = table.insertRow(); row.appendChild(text("td", a.label));
    row.appendChild(text("td", a.score.toFixed(4), "num"));
    if (a.box) row.appendChild(text("td", "box " + a.box.map((v) => v.toFixed(1)).join(", "))); }
  panel.appendChild(table);
  if (entry.latency) panel.appendChild(text("p", `decode ${entry.latency[0].toFixed(2)} ms, preprocess `
    + `${entry.latency[1].toFixed(2)} ms, inference ${entry.latency[2].toFixed(2)} ms`));
  document.getElementById("detail").style.display = "block";
}
document.getElementById("detail").onclick = (event) => {
  if (event.target.id === "detail") event.target.style.display = "none"; };
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") document.getElementById("detail").style.display = "none"; });
filter();
