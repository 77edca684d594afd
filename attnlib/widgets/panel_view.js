// The figures of one live panel (attnlib/widgets/view.py, an anywidget). A head grid is drawn on two canvases
// (labels, then cells) from a float32 buffer; any other figure by plotly.js, which PlotlySource sends once per
// kernel. A change is drawn in the next animation frame (updates that arrive before it are skipped, the last one
// wins): every head grid in that frame, then every plotly figure together in the task after it, so that slow
// plotly redraws never delay the heatmaps. The view then tells the kernel which revision it drew.
const FONT = "Arial, sans-serif", INK = "#2a3f5f", NOTE_INK = "#444444", MASK = [200, 200, 200], CROSS = "#555555";
const lib = (globalThis.__attnlib_plotly ||= { promise: null, Plotly: null });  // shared by every view of the page
const CONFIG = { displaylogo: false, responsive: false };

const node = (tag, cls, parent) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (parent) parent.appendChild(e);
  return e;
};

function rgb(color) {  // "#rrggbb" or "rgb(r, g, b)" -> [r, g, b]
  if (color.startsWith("#")) return [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
  return color.match(/[\d.]+/g).slice(0, 3).map(Number);
}

function colormap(stops) {  // 256 RGB entries, linear between the colour scale's stops as plotly interpolates
  const s = stops.map(([p, c]) => [p, ...rgb(c)]), lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0, k = 0; i < 256; i++) {
    const v = i / 255;
    while (k < s.length - 2 && v > s[k + 1][0]) k++;
    const a = s[k], b = s[k + 1], f = b[0] > a[0] ? Math.min(1, Math.max(0, (v - a[0]) / (b[0] - a[0]))) : 0;
    for (let c = 1; c <= 3; c++) lut[i * 3 + c - 1] = a[c] + (b[c] - a[c]) * f;
  }
  return lut;
}

const ENTITIES = { "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'", "&nbsp;": " " };
function runs(html) {  // plotly's label markup (<br>, <b>, <i>, <span style="color; font-size">) as lines of runs
  const lines = [[]], stack = [{}];
  for (const part of String(html).split(/(<[^>]*>)/)) {
    const tag = part.match(/^<\s*(\/?)\s*(\w+)([^>]*)>$/);
    if (!tag) {
      if (part) lines[lines.length - 1].push({ ...stack[stack.length - 1], text: part.replace(/&[#\w]+;/g, (e) => ENTITIES[e] ?? e) });
    } else if (tag[2].toLowerCase() === "br") lines.push([]);
    else if (tag[1]) { if (stack.length > 1) stack.pop(); }
    else {
      const top = { ...stack[stack.length - 1] }, name = tag[2].toLowerCase();
      const color = tag[3].match(/(?:^|[^-])color\s*:\s*([^;'"]+)/), size = tag[3].match(/font-size\s*:\s*(\d+)/);
      if (name === "b") top.bold = true;
      if (name === "i") top.italic = true;
      if (color) top.color = color[1].trim();
      if (size) top.size = Number(size[1]);
      stack.push(top);
    }
  }
  return lines;
}

// Draw markup at (x, y): align "left" | "center" | "right", valign "top" | "middle" | "bottom" of the block.
function text(ctx, html, x, y, { size = 12, color = INK, align = "left", valign = "middle", angle = 0 } = {}) {
  const lines = runs(html).map((line) => {
    const h = Math.max(size, ...line.map((r) => r.size || 0)) * 1.3;
    let w = 0;
    for (const r of line) { ctx.font = font(r, size); r.w = ctx.measureText(r.text).width; w += r.w; }
    return { line, w, h };
  });
  const total = lines.reduce((s, l) => s + l.h, 0);
  ctx.save();
  ctx.translate(x, y);
  ctx.rotate(angle);
  let top = valign === "top" ? 0 : valign === "bottom" ? -total : -total / 2;
  for (const { line, w, h } of lines) {
    let left = align === "left" ? 0 : align === "right" ? -w : -w / 2;
    for (const r of line) {
      ctx.font = font(r, size);
      ctx.fillStyle = r.color || color;
      ctx.textBaseline = "middle";
      ctx.fillText(r.text, left, top + h / 2);
      left += r.w;
    }
    top += h;
  }
  ctx.restore();
  return Math.max(0, ...lines.map((l) => l.w));
}
const escaped = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");  // data as text
const font = (r, size) => `${r.italic ? "italic " : ""}${r.bold ? "bold " : ""}${r.size || size}px ${FONT}`;

function floats(view) {  // a DataView from the kernel as a Float32Array (copied when it is not 4-byte aligned)
  const { buffer, byteOffset, byteLength } = view;
  return byteOffset % 4 ? new Float32Array(buffer.slice(byteOffset, byteOffset + byteLength))
    : new Float32Array(buffer, byteOffset, byteLength / 4);
}

class Grid {  // one head-grid figure: title, labels and colour bar on `base`, the cells on `cells` above it
  constructor(root, texts) {
    this.texts = texts;
    this.box = node("div", "al-grid", root);
    this.base = node("canvas", "al-grid-base", this.box);
    this.cells = node("canvas", "al-grid-cells al-heatmap", this.box);
    this.cells.setAttribute("role", "img");
    this.tip = node("div", "al-tip", this.box);
    const png = node("button", "al-png", this.box);
    png.textContent = texts.png;
    png.title = texts.png_title;
    png.onclick = () => this.png();
    this.cells.onmousemove = (e) => this.hover(e);
    this.cells.onmouseleave = () => { this.tip.style.display = "none"; };
    this.key = null;
  }

  update(fig) {
    const { weights, masked, markers, ...layout } = fig, key = JSON.stringify(layout);
    this.fig = fig;
    this.w = floats(weights);
    this.m = masked ? new Uint8Array(masked.buffer, masked.byteOffset, masked.byteLength) : null;
    if (key !== this.key) { this.key = key; this.layout(); }
    this.draw();
  }

  rect(h) {  // pixel box of head h's heatmap
    const { width, height, margin: [l, r, t, b], domains } = this.fig, [[x0, x1], [y0, y1]] = domains[h];
    const pw = width - l - r, ph = height - t - b;
    return { x: l + x0 * pw, y: t + (1 - y1) * ph, w: (x1 - x0) * pw, h: (y1 - y0) * ph };
  }

  layout() {  // size both canvases and draw everything but the cells
    const f = this.fig, dpr = window.devicePixelRatio || 1, heads = f.domains.length;
    for (const c of [this.base, this.cells]) {
      c.width = Math.round(f.width * dpr);
      c.height = Math.round(f.height * dpr);
      c.style.width = `${f.width}px`;
      c.style.height = `${f.height}px`;
      c.getContext("2d").setTransform(dpr, 0, 0, dpr, 0, 0);
    }
    this.box.style.width = `${f.width}px`;
    this.box.style.height = `${f.height}px`;
    const ctx = this.base.getContext("2d"), [l, r, t, b] = f.margin, pw = f.width - l - r, ph = f.height - t - b;
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, f.width, f.height);
    text(ctx, f.title, 0.02 * f.width, t / 2, { size: 15 });
    const plain = runs(f.title).map((line) => line.map((r) => r.text).join("")).join(" ");
    this.cells.setAttribute("aria-label", `${plain}. ${this.texts.image}`);
    let xExtent = 0, yExtent = 0;
    for (let h = 0; h < heads; h++) {
      const box = this.rect(h), row = Math.floor(h / f.cols), col = h % f.cols;
      if (f.labels.length) text(ctx, f.labels[h], box.x + box.w / 2, box.y - 2, { size: 11, align: "center", valign: "bottom" });
      if (row === f.rows - 1 || h + f.cols >= heads) {
        for (const j of f.x_ticks) {
          const w = text(ctx, escaped(f.k_tokens[j]), box.x + (j + 0.5) * box.w / f.k_tokens.length, box.y + box.h + 4,
            { size: f.x_font, align: "right", angle: -Math.PI / 3 });
          xExtent = Math.max(xExtent, w * Math.sin(Math.PI / 3));
        }
      }
      if (col === 0) {
        for (const i of f.y_ticks) {
          const w = text(ctx, escaped(f.q_tokens[i]), box.x - 4, box.y + (i + 0.5) * box.h / f.q_tokens.length, { size: f.y_font, align: "right" });
          yExtent = Math.max(yExtent, w);
        }
      }
    }
    const bottomLeft = (f.rows - 1) * f.cols, xs = this.rect(Math.min(bottomLeft, heads - 1)), ys = this.rect(bottomLeft);
    text(ctx, f.x_title, xs.x + xs.w / 2, Math.min(xs.y + xs.h + xExtent + 18, f.height - 24), { size: 14, align: "center" });
    text(ctx, f.y_title, ys.x - yExtent - 18, ys.y + ys.h / 2, { size: 14, align: "center", angle: -Math.PI / 2 });
    this.lut = colormap(f.colorscale);
    this.colorbar(ctx, l + 1.02 * pw, t + 0.05 * ph, 0.9 * ph);
    if (f.note) text(ctx, f.note, 0, f.height - 9, { size: 11, color: NOTE_INK });
    for (const a of f.notes) {
      const align = a.xanchor === "auto" ? "center" : a.xanchor;
      text(ctx, a.text, l + a.x * pw, t + (1 - a.y) * ph - a.yshift, { size: a.size, align, valign: "top" });
    }
  }

  colorbar(ctx, x, top, height) {  // the fixed 0–1 colour bar, 14 px wide, ticks and title on its right
    const lut = this.lut;
    for (let y = 0; y < height; y++) {
      const i = Math.round((1 - y / height) * 255) * 3;
      ctx.fillStyle = `rgb(${lut[i]},${lut[i + 1]},${lut[i + 2]})`;
      ctx.fillRect(x, top + y, 14, 1.5);
    }
    let widest = 0;
    for (const v of this.fig.bar_ticks) widest = Math.max(widest, text(ctx, String(v), x + 18, top + (1 - v) * height, { size: 12 }));
    text(ctx, this.fig.bar_title, x + 30 + widest, top + height / 2, { size: 14, align: "center", angle: -Math.PI / 2 });
  }

  draw() {  // the cells of every head, masked cells grey (× when large), then any markers
    const f = this.fig, ctx = this.cells.getContext("2d"), nq = f.q_tokens.length, nk = f.k_tokens.length;
    ctx.clearRect(0, 0, f.width, f.height);
    ctx.imageSmoothingEnabled = false;
    const tile = this.tile || (this.tile = document.createElement("canvas"));
    tile.width = nk;
    tile.height = nq;
    const tctx = tile.getContext("2d"), img = tctx.createImageData(nk, nq);
    for (let h = 0; h < f.domains.length; h++) {
      for (let c = 0; c < nq * nk; c++) {
        const k = h * nq * nk + c, px = c * 4;
        const rgb3 = this.m && this.m[k] ? MASK : null, i = Math.round(Math.min(1, Math.max(0, this.w[k])) * 255) * 3;
        img.data[px] = rgb3 ? rgb3[0] : this.lut[i];
        img.data[px + 1] = rgb3 ? rgb3[1] : this.lut[i + 1];
        img.data[px + 2] = rgb3 ? rgb3[2] : this.lut[i + 2];
        img.data[px + 3] = 255;
      }
      tctx.putImageData(img, 0, 0);
      const box = this.rect(h);
      ctx.drawImage(tile, box.x, box.y, box.w, box.h);
      if (this.m && f.crosses) this.crosses(ctx, h, box, nq, nk);
    }
    for (const m of this.fig.markers) this.marker(ctx, m, nq, nk);
    this.cells.alWeights = this.w;  // for the browser tests and benchmark: the data drawn now
    this.cells.dataset.revision = String(Number(this.cells.dataset.revision || 0) + 1);
  }

  crosses(ctx, h, box, nq, nk) {
    ctx.fillStyle = CROSS;
    ctx.font = `11px ${FONT}`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (let i = 0; i < nq; i++) {
      for (let j = 0; j < nk; j++) {
        if (this.m[h * nq * nk + i * nk + j]) ctx.fillText("×", box.x + (j + 0.5) * box.w / nk, box.y + (i + 0.5) * box.h / nq);
      }
    }
  }

  marker(ctx, m, nq, nk) {  // plotly's circle / square markers, "-open" ones as outlines
    const box = this.rect(m.head), r = m.size / 2, open = m.symbol.endsWith("-open");
    ctx.strokeStyle = ctx.fillStyle = m.color;
    ctx.lineWidth = m.line;
    m.x.forEach((x, i) => {
      const cx = box.x + (x + 0.5) * box.w / nk, cy = box.y + (m.y[i] + 0.5) * box.h / nq;
      ctx.beginPath();
      if (m.symbol.startsWith("square")) ctx.rect(cx - r, cy - r, 2 * r, 2 * r);
      else ctx.arc(cx, cy, r, 0, 2 * Math.PI);
      if (open) ctx.stroke(); else ctx.fill();
    });
  }

  hover(e) {  // query, key, weight (and head) of the cell under the pointer
    const f = this.fig, at = this.cells.getBoundingClientRect(), x = e.clientX - at.left, y = e.clientY - at.top;
    const nq = f.q_tokens.length, nk = f.k_tokens.length;
    for (let h = 0; h < f.domains.length; h++) {
      const b = this.rect(h);
      if (x < b.x || x >= b.x + b.w || y < b.y || y >= b.y + b.h) continue;
      const i = Math.floor((y - b.y) / b.h * nq), j = Math.floor((x - b.x) / b.w * nk), k = h * nq * nk + i * nk + j;
      this.tip.replaceChildren(fill(this.texts.hover, { query: f.q_tokens[i], key: f.k_tokens[j] }), node("br"),
        fill(this.texts.weight, { weight: this.w[k].toFixed(4) }),
        document.createTextNode(`${this.m && this.m[k] ? ` · ${this.texts.masked}` : ""}${f.labels.length ? ` · ${f.labels[h]}` : ""}`));
      Object.assign(this.tip.style, { display: "block", left: `${Math.min(x + 14, f.width - 160)}px`, top: `${y + 14}px` });
      return;
    }
    this.tip.style.display = "none";
  }

  png() {  // both canvases as one PNG file
    const out = document.createElement("canvas");
    out.width = this.base.width;
    out.height = this.base.height;
    const ctx = out.getContext("2d");
    ctx.drawImage(this.base, 0, 0);
    ctx.drawImage(this.cells, 0, 0);
    out.toBlob((blob) => {
      const a = node("a");
      a.href = URL.createObjectURL(blob);
      a.download = `${runs(this.fig.title)[0].map((r) => r.text).join("").trim() || "attention"}.png`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 1000);
    });
  }
}

function fill(template, values) {  // a template's {name} placeholders as bold text nodes, without HTML parsing
  const span = node("span");
  template.split(/\{(\w+)\}/).forEach((part, i) => {
    if (i % 2) node("b", null, span).textContent = values[part] ?? "";
    else span.appendChild(document.createTextNode(part));
  });
  return span;
}

class PlotlyFigure {  // any other figure: Plotly.react redraws only what changed
  constructor(root) { this.div = node("div", "al-plotly", root); this.json = null; }
  update(json, Plotly) {
    if (json === this.json) return;
    this.json = json;
    const fig = JSON.parse(json);
    Plotly.react(this.div, fig.data, fig.layout, CONFIG);
  }
}

function plotlyLib(model, host) {  // plotly.js, imported once per page from the kernel's PlotlySource
  lib.promise ||= (async () => {
    const source = await host.getModel(model.get("plotly"));
    const url = URL.createObjectURL(new Blob([source.get("source")], { type: "text/javascript" }));
    try { await import(/* webpackIgnore: true */ url); } finally { URL.revokeObjectURL(url); }
    return (lib.Plotly = globalThis.Plotly);
  })().catch((err) => { lib.promise = null; throw err; });
  return lib.promise;
}

function nameHandles(el) {  // ipywidgets' slider handles have no accessible name: give each its slider's label
  const panel = el.closest(".al-panel");
  for (const slider of panel ? panel.querySelectorAll(".widget-slider") : []) {
    const label = slider.querySelector(".widget-label")?.textContent.trim();
    for (const handle of slider.querySelectorAll(".noUi-handle")) {
      if (label && handle.getAttribute("aria-label") !== label) handle.setAttribute("aria-label", label);
    }
  }
}

export default {
  render({ model, el, host }) {
    el.classList.add("al-figures");
    let parts = [], kinds = "", frame = 0, later = 0, received = null;
    const drawPlotly = (Plotly) => {  // every plotly figure at the newest state, in one task
      later = 0;
      const begin = performance.now();
      model.get("figures").forEach((f, i) => {
        if (f.kind === "plotly" && parts[i] instanceof PlotlyFigure) parts[i].update(f.json, Plotly);
      });
      if (el.alTiming) Object.assign(el.alTiming, { plotly_start: begin, plotly_end: performance.now() });
    };
    const plotly = () => {  // after the frame that shows the grids: the secondary figures stay off the critical path
      if (lib.Plotly) { if (!later) later = setTimeout(() => drawPlotly(lib.Plotly), 0); return; }
      plotlyLib(model, host).then(drawPlotly).catch((err) => console.error("[attnlib] plotly.js did not load:", err));
    };
    const draw = () => {
      frame = 0;
      const start = performance.now(), figures = model.get("figures"), revision = model.get("revision");
      if (figures.map((f) => f.kind).join() !== kinds) {  // new set of figures: new parts
        el.replaceChildren();
        kinds = figures.map((f) => f.kind).join();
        parts = figures.map((f) => (f.kind === "grid" ? new Grid(el, model.get("texts")) : new PlotlyFigure(el)));
      }
      figures.forEach((f, i) => { if (f.kind === "grid") parts[i].update(f); });
      const anyPlotly = figures.some((f) => f.kind === "plotly");
      // for the browser benchmark (attnlib/bench/browser): when this revision arrived and what drawing it cost
      el.alTiming = { revision, received, start, grids: performance.now(), python_ms: model.get("python_ms"),
        plotly_start: anyPlotly ? null : undefined, plotly_end: anyPlotly ? null : undefined };
      if (anyPlotly) plotly();
      el.dataset.revision = String(revision);
      nameHandles(el);
      model.send({ drawn: revision });
    };
    const schedule = () => { if (!frame) frame = requestAnimationFrame(draw); };
    const arrived = () => { received = performance.now(); schedule(); };
    model.on("change:revision", arrived);
    schedule();
    const late = setTimeout(() => nameHandles(el), 1000);  // the controls may render after the figures
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(later);
      clearTimeout(late);
      model.off("change:revision", arrived);
    };
  },
};
