import FoundationEssentials
public import NetRunner
public import NetRunnerImage
import NetRunnerSupport

/// A browsable page of bulk results.
///
/// Net Runner's "view the results in bulk and individually": every image as a thumbnail with its best answer, filtered by label, score
/// or failure, and any one opened with all its answers, its latencies and, for detectors, its
/// boxes drawn over it. One self-contained HTML file: thumbnails inline, no network.
public enum ResultsGallery {
    /// The most images a page shows (a note says how many were left out).
    public static let maximumImages = 10_000

    /// Renders the page.
    ///
    /// - Parameters:
    ///   - records: The results, in file order.
    ///   - thumbnails: Thumbnails by image path (images without one show a placeholder).
    ///   - title: The page's title (the results file's name).
    /// - Returns: The HTML.
    public static func render(_ records: [BulkRecord], thumbnails: [String: Thumbnail], title: String) -> String {
        let shown = records.prefix(maximumImages)
        var entries: [Entry] = []
        for record in shown {
            var entry = Entry(image: record.image, error: record.error)
            if let thumbnail = thumbnails[record.image] {
                entry.thumbnail = thumbnail.dataURI
                entry.width = thumbnail.originalSize.width
                entry.height = thumbnail.originalSize.height
            }
            switch record.answer {
            case .classification(let result)?:
                entry.answers = result.categories.map {
                    .init(label: $0.displayName ?? $0.label ?? "class \($0.index)", score: $0.score, box: nil)
                }
            case .detection(let result)?:
                entry.width = result.imageWidth
                entry.height = result.imageHeight
                entry.answers = result.detections.map { detection in
                    let box = detection.boundingBox
                    let best = detection.categories.first
                    return .init(
                        label: best?.displayName ?? best?.label ?? "class \(best?.index ?? 0)", score: detection.score,
                        box: [box.minX, box.minY, box.width, box.height])
                }
            case nil:
                break
            }
            if let answer = record.answer {
                entry.latency = [
                    answer.decodingMilliseconds, answer.preprocessingMilliseconds, answer.inferenceMilliseconds,
                ]
            }
            entries.append(entry)
        }
        let encoder = JSONCoding.encoder()
        let json = (try? encoder.encode(entries)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        // Inside <script>, "</" would end the element: JSON allows "<\/".
        let data = json.replacing("</", with: "<\\/")
        let failed = records.filter { $0.error != nil }.count
        let note =
            records.count > maximumImages
            ? "<p class=\"note\">Showing the first \(maximumImages) of \(records.count) images.</p>" : ""
        return page.replacing("{{TITLE}}", with: HTMLWriter.escape(title))
            .replacing(
                "{{SUMMARY}}",
                with: "\(records.count) image\(records.count == 1 ? "" : "s"), \(failed) failed"
            )
            .replacing("{{NOTE}}", with: note)
            .replacing("{{DATA}}", with: data)
    }

    struct Entry: Encodable {
        struct Answer: Encodable {
            var label: String
            var score: Float
            var box: [Float]?
        }
        var image: String
        var error: String?
        var thumbnail: String?
        var width: Int?
        var height: Int?
        var answers: [Answer] = []
        var latency: [Double]?
    }

    static let page = #"""
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{TITLE}}</title>
        <style>
        body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#1f2328;background:#f6f8fa}
        header{position:sticky;top:0;background:#fff;border-bottom:1px solid #d0d7de;padding:10px 16px;z-index:1}
        header h1{font-size:17px;margin:0 0 6px}header .controls{display:flex;flex-wrap:wrap;gap:14px;align-items:center}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;padding:16px}
        figure{margin:0;background:#fff;border:1px solid #d0d7de;border-radius:6px;overflow:hidden;cursor:pointer}
        figure img,figure .none{display:block;width:100%;height:130px;object-fit:cover;background:#eaeef2}
        figure .none{display:flex;align-items:center;justify-content:center;color:#57606a;font-size:12px}
        figcaption{padding:6px 8px;font-size:12px}figcaption .name{color:#57606a;overflow:hidden;text-overflow:ellipsis;
        white-space:nowrap}figure.failed{border-color:#cf222e}figure.failed figcaption b{color:#cf222e}
        .note{padding:0 16px;color:#57606a}#detail{position:fixed;inset:0;background:rgba(0,0,0,.6);display:none;z-index:2}
        #detail .panel{background:#fff;max-width:900px;margin:4vh auto;border-radius:8px;padding:16px;max-height:88vh;
        overflow:auto}#detail .stage{position:relative;display:inline-block}#detail img{max-width:560px;width:100%}
        #detail svg{position:absolute;left:0;top:0;width:100%;height:100%}table{border-collapse:collapse}
        td{padding:2px 8px}td.num{text-align:right;font-variant-numeric:tabular-nums}
        </style></head><body>
        <header><h1>{{TITLE}}</h1><div class="controls"><span>{{SUMMARY}}</span>
        <label>Label <input id="label" list="labels" placeholder="any"></label><datalist id="labels"></datalist>
        <label>Score at least <input id="score" type="range" min="0" max="1" step="0.01" value="0">
        <output id="scoreValue">0.00</output></label>
        <label><input id="failed" type="checkbox"> failed only</label><span id="count"></span></div></header>
        {{NOTE}}
        <div class="grid" id="grid"></div>
        <div id="detail"><div class="panel" id="panel"></div></div>
        <script type="application/json" id="data">{{DATA}}</script>
        <script>
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
        for (const label of [...labels].sort()) { const o = document.createElement("option"); o.value = label; list.appendChild(o); }
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
        </script></body></html>
        """#
}
