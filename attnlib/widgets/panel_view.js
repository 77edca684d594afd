// The figures of one live panel (attnlib/widgets/view.py, an anywidget). A head grid is drawn on two canvases
// (labels, then cells) from a float32 buffer; a chart (saturation figure, score histogram) on one canvas from its
// plotly JSON (bar and scatter traces on cartesian subplots, laid out as plotly does); any other figure by plotly.js, which PlotlySource sends once per
// kernel. A change is drawn in the next animation frame (updates that arrive before it are skipped, the last one
// wins): every head grid and chart in that frame, then every plotly figure together in the task after it, so that slow
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
    [this.base, this.cells] = frame(this, root, texts, ["al-grid-base", "al-grid-cells al-heatmap"], texts.png_title);
    this.key = null;
    this.at = null;  // the keyboard's focus cell [head, query, key], or null
    this.focusBox = node("div", "al-focus", this.box);
    this.cells.tabIndex = 0;
    this.cells.dataset.lmSuppressShortcuts = "true";  // JupyterLab's command-mode keys (arrows, Escape) stay out
    this.cells.onkeydown = (e) => this.keydown(e);
    this.cells.onblur = () => { this.focusBox.style.display = "none"; };
    this.cells.onfocus = () => { if (this.at) this.focusBox.style.display = "block"; };
  }

  keydown(e) {  // arrows move the focus cell (past a row's end: the next head), Home/End, Escape leaves the heatmap
    const f = this.fig, heads = f.domains.length, nq = f.q_tokens.length, nk = f.k_tokens.length;
    if (e.key === "Escape") { this.at = null; this.focusBox.style.display = "none"; this.toggle.focus(); e.preventDefault(); e.stopPropagation(); return; }
    const move = { ArrowUp: [0, -1, 0], ArrowDown: [0, 1, 0], ArrowLeft: [0, 0, -1], ArrowRight: [0, 0, 1], Home: [0, 0, -nk], End: [0, 0, nk] }[e.key];
    if (!move) return;
    e.preventDefault();
    e.stopPropagation();
    let [h, i, j] = this.at || [0, 0, -move[2]];
    i = Math.min(nq - 1, Math.max(0, i + move[1]));
    j += move[2];
    if (j >= nk && e.key === "ArrowRight" && h < heads - 1) [h, j] = [h + 1, 0];
    if (j < 0 && e.key === "ArrowLeft" && h > 0) [h, j] = [h - 1, nk - 1];
    this.mark(h, i, Math.min(nk - 1, Math.max(0, j)));
    this.live.textContent = this.cellText(h, ...this.at.slice(1));
  }

  mark(h, i, j) {  // the visible focus cell at head h, query i, key j
    const f = this.fig, b = this.rect(h), w = b.w / f.k_tokens.length, hh = b.h / f.q_tokens.length;
    this.at = [h, i, j];
    Object.assign(this.focusBox.style, { display: document.activeElement === this.cells ? "block" : "none",
      left: `${b.x + j * w}px`, top: `${b.y + i * hh}px`, width: `${w}px`, height: `${hh}px` });
  }

  cellText(h, i, j) {  // "query it → key animal: weight 0.92" (, masked) (, the head's label)
    const f = this.fig, k = h * f.q_tokens.length * f.k_tokens.length + i * f.k_tokens.length + j, t = this.texts;
    return fillText(t.cell, { query: f.q_tokens[i], key: f.k_tokens[j], weight: this.w[k].toFixed(2) })
      + (this.m && this.m[k] ? `${t.list_sep}${t.masked}` : "") + (f.labels.length ? `${t.list_sep}${plain(f.labels[h])}` : "");
  }

  summary() { return gridSummary(this.fig, this.w, this.m, this.texts); }

  tables() { return gridTables(this.fig, this.w, this.m, this.texts); }

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
    if (this.at) this.mark(...this.at);
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
    if (FORCED && FORCED.matches) this.boundaries(ctx, nq, nk);
    settle(this);
    this.cells.alWeights = this.w;  // for the browser tests and benchmark: the data drawn now (and its layout)
    this.cells.alView = f;
    this.cells.alMasked = this.m;
    this.cells.dataset.revision = String(Number(this.cells.dataset.revision || 0) + 1);
  }

  boundaries(ctx, nq, nk) {  // forced colours (Windows high contrast): a line between every two cells
    ctx.strokeStyle = "#000000";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let h = 0; h < this.fig.domains.length; h++) {
      const b = this.rect(h);
      for (let i = 0; i <= nq; i++) { ctx.moveTo(b.x, b.y + i * b.h / nq); ctx.lineTo(b.x + b.w, b.y + i * b.h / nq); }
      for (let j = 0; j <= nk; j++) { ctx.moveTo(b.x + j * b.w / nk, b.y); ctx.lineTo(b.x + j * b.w / nk, b.y + b.h); }
    }
    ctx.stroke();
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

}

// A figure's box: stacked canvases of these classes (the last one takes the pointer: figure.hover), a hover tip
// and a PNG button that saves the canvases as one image, in a wrapper with the figure's accessible parts
// (`accessible`). Sets figure.texts, .box, .tip; returns the canvases.
function frame(figure, root, texts, classes, pngTitle) {
  figure.texts = texts;
  figure.wrap = node("div", "al-fig", root);
  figure.box = node("div", "al-grid", figure.wrap);
  const canvases = classes.map((c) => node("canvas", c, figure.box)), top = canvases[canvases.length - 1];
  top.setAttribute("role", "img");
  figure.tip = node("div", "al-tip", figure.box);
  const png = node("button", "al-png", figure.box);
  png.textContent = texts.png;
  png.title = pngTitle;
  png.setAttribute("aria-label", pngTitle);
  png.onclick = () => savePng(canvases, figure.fig.title);
  top.onmousemove = (e) => figure.hover(e);
  top.onmouseleave = () => { figure.tip.style.display = "none"; };
  accessible(figure, top);
  return canvases;
}

// What a screen reader and a keyboard get of a figure (issue 25): `target`'s name is the title and its
// description the numbers drawn (figure.summary()); a "Show as table" button opens figure.tables(); a polite live
// region announces the new summary once a control has settled (SETTLE_MS after the last redraw) and, for a
// heatmap, the focus cell.
const SETTLE_MS = 500, FORCED = globalThis.matchMedia ? globalThis.matchMedia("(forced-colors: active)") : null;
function accessible(figure, target) {
  const t = figure.texts, id = `al-fig-${(lib.ids = (lib.ids || 0) + 1)}`;  // lib: page-wide, so ids are unique
  figure.target = target;
  figure.desc = node("p", null, figure.wrap);
  figure.desc.id = `${id}-desc`;
  figure.desc.hidden = true;  // read through aria-describedby only
  target.setAttribute("aria-describedby", figure.desc.id);
  const toggle = (figure.toggle = node("button", "al-table-toggle", figure.wrap));
  toggle.type = "button";
  toggle.textContent = t.table_show;
  toggle.setAttribute("aria-expanded", "false");
  figure.table = node("div", "al-table", figure.wrap);
  figure.table.id = `${id}-table`;
  figure.table.hidden = true;
  toggle.setAttribute("aria-controls", figure.table.id);
  toggle.onclick = () => {
    const open = figure.table.hidden;
    figure.table.hidden = !open;
    toggle.textContent = open ? t.table_hide : t.table_show;
    toggle.setAttribute("aria-expanded", String(open));
    figure.table.replaceChildren(...(open ? figure.tables() : []));
  };
  figure.live = node("div", "al-sr al-live", figure.wrap);
  figure.live.setAttribute("aria-live", "polite");
}

function settle(figure) {  // after a redraw: the name at once; the summary (and an open table) once it settles
  const t = figure.texts, first = !figure.desc.textContent;
  figure.target.setAttribute("aria-label", plain(figure.fig.title) || t.figure);
  clearTimeout(figure.settling);
  const done = () => {
    const summary = figure.summary(), hint = figure instanceof Grid ? `${t.sentence_sep}${t.image}${t.sentence_sep}${t.keys}` : "";
    figure.desc.textContent = summary + hint;
    if (!first && figure.live.textContent !== summary) figure.live.textContent = summary;
    if (!figure.table.hidden) figure.table.replaceChildren(...figure.tables());
    figure.target.dataset.described = String(Number(figure.target.dataset.described || 0) + 1);  // for the tests
  };
  if (first) done(); else figure.settling = setTimeout(done, SETTLE_MS);
}

const titleOf = (layout) => (typeof layout.title === "string" ? layout.title : layout.title?.text ?? "");
const plain = (html) => runs(html).map((line) => line.map((r) => r.text).join("")).join(" ").trim();  // markup as text
const fillText = (template, values) => template.replace(/\{(\w+)\}/g, (_, k) => String(values[k] ?? ""));

function strongest(values, n, skip) {  // indices of the n largest of values (not skipped), largest first
  return [...values.keys()].filter((j) => !skip(j)).sort((a, b) => values[b] - values[a] || a - b).slice(0, n);
}

function gridSummary(f, w, m, t) {  // each query's two strongest keys with their weights, per head
  const nq = f.q_tokens.length, nk = f.k_tokens.length, out = [];
  for (let h = 0; h < f.domains.length; h++) {
    const rows = f.q_tokens.map((q, i) => {
      const at = h * nq * nk + i * nk, row = w.subarray(at, at + nk);
      const keys = strongest(row, 2, (j) => m && m[at + j]).map((j) => `${f.k_tokens[j]} ${row[j].toFixed(2)}`);
      return fillText(t.desc_row, { query: q, keys: keys.join(t.list_sep) });
    }).join(t.row_sep);
    out.push(f.labels.length ? fillText(t.desc_head, { head: plain(f.labels[h]), rows }) : fillText(t.desc_grid, { rows }));
  }
  return out.join(t.sentence_sep);
}

function table(caption, corner, columns, rows) {  // <table>: caption, column headers, rows [header, ...cells]
  const el = node("table"), head = node("tr", null, node("thead", null, el)), body = node("tbody", null, el);
  node("caption", null, el).textContent = caption;
  for (const c of [corner, ...columns]) Object.assign(node("th", null, head), { scope: "col", textContent: c });
  for (const [name, ...cells] of rows) {
    const tr = node("tr", null, body);
    Object.assign(node("th", null, tr), { scope: "row", textContent: name });
    for (const c of cells) node("td", null, tr).textContent = c;
  }
  return el;
}

function gridTables(f, w, m, t) {  // one table per head: rows the queries, columns the keys, cells the weights
  const nq = f.q_tokens.length, nk = f.k_tokens.length;
  return f.domains.map((_, h) => table(f.labels.length ? `${plain(f.title)}${t.list_sep}${plain(f.labels[h])}` : plain(f.title),
    t.corner, f.k_tokens, f.q_tokens.map((q, i) => [q, ...f.k_tokens.map((_, j) => {
      const k = h * nq * nk + i * nk + j;
      return m && m[k] ? t.masked : w[k].toFixed(4);
    })])));
}

const number = (v, d = 2) => (typeof v === "number" ? v.toFixed(d) : String(v ?? ""));
const arr = (v) => (v === null || v === undefined ? [] : Array.isArray(v) ? v : typeof v === "object" ? Object.values(v) : [v]);
const axisTitle = (layout, ref) => plain(layout[ref.replace(/^(.)(\d*)$/, "$1axis$2")]?.title?.text ?? layout[ref.replace(/^(.)(\d*)$/, "$1axis$2")]?.title ?? "");

function labelOf(tr, layout, i) {  // point i's name: its customdata or text when a string, its tick text, else its x
  const x = arr(tr.x)[i], own = [arr(tr.customdata)[i], arr(tr.text)[i]].find((v) => typeof v === "string" && v);
  if (own) return plain(own);
  const axis = layout[(tr.xaxis || "x").replace(/^x(\d*)$/, "xaxis$1")] || {}, at = arr(axis.tickvals).indexOf(x);
  return at >= 0 && arr(axis.ticktext)[at] !== undefined ? plain(arr(axis.ticktext)[at]) : number(x, 4).replace(/\.?0+$/, "");
}

function chartSummary(fig, t) {  // a saturation chart: the row's entropy and largest weight; any chart: each trace's largest value
  const data = fig.data || [], layout = fig.layout || {}, out = [];
  if (layout.meta?.kind === "saturation" && data.length) {
    const bar = data[0], y = arr(bar.y).map(Number), best = strongest(y, 1, () => false)[0];
    const entropy = -y.reduce((s, p) => s + (p > 0 ? p * Math.log(p) : 0), 0);
    out.push(fillText(t.desc_saturation, { row: plain(layout.annotations?.[0]?.text ?? ""), entropy: entropy.toFixed(2),
      weight: number(y[best]), key: labelOf(bar, layout, best) }));
    const marks = data.filter((tr) => tr.mode === "markers" && arr(tr.x)[0] !== null && arr(tr.x)[0] !== undefined);
    if (marks.length) out.push(fillText(t.desc_current, { name: plain(marks[0].name || ""), d_k: arr(marks[0].x)[0],
      values: marks.map((tr) => `${axisTitle(layout, tr.yaxis || "y")} ${number(arr(tr.y)[0])}`).join(t.list_sep) }));
    return out.join(t.sentence_sep);
  }
  for (const tr of data) {
    if (tr.type === "heatmap") { out.push(heatmapSummary(tr, t)); continue; }
    if (tr.type === "table") {  // a plotly table: each column's header and cells, as text
      const heads = arr(tr.header?.values);
      out.push(fillText(t.desc_head, { head: plain(tr.name || titleOf(layout)), rows: arr(tr.cells?.values).map((col, k) =>
        `${plain(String(heads[k] ?? ""))}: ${arr(col).map((v) => plain(String(v))).join(t.list_sep)}`).join(t.row_sep) }));
      continue;
    }
    const y = arr(tr.y).map((v) => (v === null ? NaN : Number(v))), best = strongest(y, 1, (j) => Number.isNaN(y[j]))[0];
    if (best === undefined || tr.visible === false) continue;
    out.push(fillText(t.desc_trace, { name: plain(tr.name || axisTitle(layout, tr.yaxis || "y")), y: number(y[best]),
      x: labelOf(tr, layout, best) }));
  }
  return out.join(t.sentence_sep);
}

function heatmapSummary(tr, t) {  // a plotly heatmap trace: each row's largest cell
  const z = arr(tr.z).map(arr), xs = arr(tr.x), ys = arr(tr.y);
  const rows = z.map((row, i) => {
    const v = row.map((c) => (c === null ? NaN : Number(c))), j = strongest(v, 1, (k) => Number.isNaN(v[k]))[0];
    return j === undefined ? "" : fillText(t.desc_row, { query: ys[i] ?? i, keys: `${xs[j] ?? j} ${number(v[j])}` });
  }).filter(Boolean);
  return tr.name ? fillText(t.desc_head, { head: plain(tr.name), rows: rows.join(t.row_sep) })
    : fillText(t.desc_grid, { rows: rows.join(t.row_sep) });
}

function chartTables(fig, t) {  // per subplot: rows its x values (named as drawn), columns its traces; a heatmap as its grid
  const data = fig.data || [], layout = fig.layout || {}, groups = new Map();
  const tables = [];
  for (const tr of data) {
    if (tr.visible === false) continue;
    if (tr.type === "heatmap") {
      const xs = arr(tr.x), z = arr(tr.z).map(arr);
      tables.push(table(plain(tr.name || plain(titleOf(layout))), t.corner, z[0] ? z[0].map((_, j) => String(xs[j] ?? j)) : [],
        z.map((row, i) => [String(arr(tr.y)[i] ?? i), ...row.map((c) => number(c, 4))])));
      continue;
    }
    const ref = `${tr.xaxis || "x"} ${tr.yaxis || "y"}`;
    if (!groups.has(ref)) groups.set(ref, []);
    groups.get(ref).push(tr);
  }
  for (const [ref, traces] of groups) {
    const [xr, yr] = ref.split(" "), rows = new Map();
    traces.forEach((tr, c) => arr(tr.x).forEach((x, i) => {
      if (x === null || arr(tr.y)[i] === null || arr(tr.y)[i] === undefined) return;
      const name = labelOf(tr, layout, i);
      if (!rows.has(name)) rows.set(name, traces.map(() => ""));
      rows.get(name)[c] = number(arr(tr.y)[i], 4);
    }));
    if (!rows.size) continue;
    const yTitle = axisTitle(layout, yr), xTitle = axisTitle(layout, xr);
    tables.push(table(fillText(t.table_caption, { y: yTitle || plain(titleOf(layout)), x: xTitle }), xTitle,
      traces.map((tr) => plain(tr.name || yTitle)), [...rows].map(([name, cells]) => [name, ...cells])));
  }
  return tables;
}

function savePng(canvases, title) {  // canvases stacked into one PNG file, named after the figure's title
  const out = document.createElement("canvas");
  out.width = canvases[0].width;
  out.height = canvases[0].height;
  const ctx = out.getContext("2d");
  for (const c of canvases) ctx.drawImage(c, 0, 0);
  out.toBlob((blob) => {
    const a = node("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${runs(title)[0].map((r) => r.text).join("").trim() || "attention"}.png`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  });
}

const GRID_INK = "#EBF0F8", DASHES = { solid: [], dot: [1, 2], dash: [3, 3], longdash: [5, 3], dashdot: [3, 2, 1, 2] };

function tickLabel(v, step) {  // as plotly writes a tick: the step's decimals, trailing zeros dropped, a real minus
  let s = Math.abs(v).toFixed(Math.max(0, -Math.floor(Math.log10(step) + 1e-9)));
  if (s.includes(".")) s = s.replace(/\.?0+$/, "");
  return (v < 0 && Number(s) !== 0 ? "\u2212" : "") + s;
}

function autoTicks([lo, hi], px, letter) {  // plotly's auto ticks: ~1 per 80 px (x) or 40 px (y), 5-10, step 2/5/10×10^k
  const rough = (hi - lo) / (Math.min(Math.max(px / (letter === "x" ? 80 : 40), 4), 9) + 1), out = [];
  if (!(rough > 0)) return [[lo, tickLabel(lo, 1)]];
  const base = 10 ** Math.floor(Math.log10(rough)), step = [2, 5, 10].map((m) => m * base).find((s) => s >= rough - 1e-12);
  for (let k = Math.ceil(lo / step - 1e-9); k <= Math.floor(hi / step + 1e-9); k++) out.push([k * step, tickLabel(k * step, step)]);
  return out;
}

function logTicks([lo, hi], dtick) {  // a log axis (range in log10 units): every `dtick`, else 1, 2, 5 per decade
  const vs = [];
  if (typeof dtick === "number") for (let k = Math.ceil(lo / dtick - 1e-9); k <= hi / dtick + 1e-9; k++) vs.push(10 ** (k * dtick));
  else for (let e = Math.floor(lo); e <= Math.ceil(hi); e++) vs.push(...[1, 2, 5].map((m) => m * 10 ** e).filter((v) => Math.log10(v) >= lo - 1e-9 && Math.log10(v) <= hi + 1e-9));
  return vs.map((v) => [v, String(Number(v.toPrecision(6)))]);
}

function autorange(a, traces, letter, log, px) {  // as plotly, roughly: 5 % (or a marker's radius) padding, bars from 0
  const bars = traces.some((tr) => tr.type === "bar");
  let vs = [];
  for (const tr of traces) {
    let v = tr[letter].filter((u) => u !== null && (!log || u > 0));
    if (tr.type === "bar" && letter === "y") v.push(0);
    if (tr.type === "bar" && letter === "x" && v.length) v = [Math.min(...v) - tr.width / 2, Math.max(...v) + tr.width / 2];
    vs = vs.concat(log ? v.map(Math.log10) : v);
  }
  if (!vs.length) return [0, 1];
  const radius = Math.max(0, ...traces.map((tr) => (tr.type === "scatter" && tr.mode.includes("markers") ? tr.size * 0.65 + tr.mlw : 0)));
  const lo = Math.min(...vs), hi = Math.max(...vs), zero = !log && (a.rangemode === "tozero" || bars);
  const pad = Math.max(0.05, (radius + 1) / px) * (hi - lo || 1);
  if (bars && letter === "x") return [lo, hi];
  return [zero && lo >= 0 ? 0 : lo - pad, zero && hi <= 0 ? 0 : hi + pad];
}

function axis(layout, ref, traces, letter, px) {  // one axis of a subplot: domain, range, ticks [[value, label]], title
  const a = layout[`${letter}axis${ref.slice(1)}`] || {}, log = a.type === "log", domain = a.domain || [0, 1];
  const length = px * (domain[1] - domain[0]), range = a.range && a.autorange !== true ? a.range : autorange(a, traces, letter, log, length);
  const ticks = a.tickvals ? a.tickvals.map((v, i) => [v, String((a.ticktext || a.tickvals)[i])])
    : log ? logTicks(range, a.dtick) : autoTicks(range, length, letter);
  return { domain, log, range, ticks, title: a.title?.text || "", angle: a.tickangle || 0, size: a.tickfont?.size || 12 };
}

function traceOf(d) {  // a plotly bar or scatter trace (plotly JSON), its defaults filled in
  const m = d.marker || {}, ln = d.line || {}, x = d.x || [], xs = x.filter((v) => v !== null).sort((a, b) => a - b);
  const gap = xs.length > 1 ? Math.min(...xs.slice(1).map((v, i) => v - xs[i])) : 1;
  return { type: d.type || "scatter", x, y: d.y || [], name: String(d.name ?? ""), xaxis: d.xaxis || "x",
    yaxis: d.yaxis || "y", hover: d.hovertemplate || "", custom: d.customdata, color: m.color ?? ln.color ?? "#444444",
    opacity: d.opacity ?? 1, legend: d.showlegend !== false, group: d.legendgroup || d.name || "", width: d.width ?? 0.85 * gap,
    mode: d.mode || "lines+markers", line: ln.color || m.color, dash: ln.dash || "solid", lw: ln.width ?? 2,
    symbol: m.symbol || "circle", size: m.size ?? 6, mlw: m.line?.width ?? 1 };
}

function chartOf({ data, layout }) {  // what a bar/scatter plotly figure shows: subplots, traces, legend, notes, lines
  const width = layout.width || 700, height = layout.height || 450, mg = layout.margin || {};
  const margin = ["l", "r", "t", "b"].map((k) => mg[k] ?? 80), pw = width - margin[0] - margin[1], ph = height - margin[2] - margin[3];
  const traces = data.filter((d) => (d.visible ?? true) === true && ["bar", "scatter"].includes(d.type || "scatter")).map(traceOf);
  const pairs = [...new Set(traces.map((tr) => `${tr.xaxis} ${tr.yaxis}`))], seen = new Set(), g = layout.legend || {};
  traces.forEach((tr) => { tr.panel = pairs.indexOf(`${tr.xaxis} ${tr.yaxis}`); });
  const panels = pairs.map((pair, i) => {
    const [xr, yr] = pair.split(" "), on = traces.filter((tr) => tr.panel === i);
    const x = axis(layout, xr, on, "x", pw), y = axis(layout, yr, on, "y", ph);
    return { domain: [x.domain, y.domain], x, y };
  });
  const entries = traces.map((tr, i) => (tr.legend && tr.name && !seen.has(tr.group) && seen.add(tr.group) ? i : -1)).filter((i) => i >= 0);
  const notes = (layout.annotations || []).filter((a) => a.visible !== false).map((a) => ({ text: a.text || "", x: a.x ?? 0.5,
    y: a.y ?? 0.5, align: ["left", "right"].includes(a.xanchor) ? a.xanchor : "center", valign: { bottom: "bottom", top: "top" }[a.yanchor] || "middle", size: a.font?.size || 12 }));
  const lines = (layout.shapes || []).map((s) => ({ ...s, panel: pairs.findIndex((p) => p.split(" ")[0] === s.xref) }))
    .filter((s) => (s.visible ?? true) === true && s.type === "line" && s.panel >= 0)
    .map((s) => ({ panel: s.panel, x0: s.x0, x1: s.x1, y0: s.y0 ?? 0, y1: s.y1 ?? 1, color: s.line?.color || "#444444", width: s.line?.width ?? 1, dash: s.line?.dash || "solid" }));
  return { width, height, margin, title: layout.title?.text || "", title_x: (layout.title?.x ?? 0.02) * width, panels, traces, notes, lines,
    legend: { entries: layout.showlegend ?? traces.length > 1 ? entries : [], row: g.orientation === "h", x: g.x ?? 1.02, y: g.y ?? 1, right: g.xanchor === "right" } };
}

function marker(ctx, x, y, symbol, size, color, lw) {  // plotly's circle, square and diamond markers ("-open": outline)
  const r = size / 2, open = symbol.endsWith("-open");
  ctx.beginPath();
  if (symbol.startsWith("square")) ctx.rect(x - r, y - r, size, size);
  else if (symbol.startsWith("diamond")) { ctx.moveTo(x, y - r * 1.3); ctx.lineTo(x + r * 1.3, y); ctx.lineTo(x, y + r * 1.3); ctx.lineTo(x - r * 1.3, y); ctx.closePath(); }
  else ctx.arc(x, y, r, 0, 2 * Math.PI);
  ctx.fillStyle = ctx.strokeStyle = color;
  ctx.setLineDash([]);
  ctx.lineWidth = lw;
  if (open) ctx.stroke(); else ctx.fill();
}

function hoverText(tr, i, parent) {  // a trace's plotly hovertemplate for point i, as DOM nodes (values as text)
  const values = { x: tr.x[i], y: tr.y[i], customdata: tr.custom ? tr.custom[i] : "" };
  const tpl = tr.hover || `(%{x}, %{y})<extra>${escaped(tr.name)}</extra>`, extra = tpl.match(/<extra>(.*?)<\/extra>/);
  const main = tpl.replace(/<extra>.*?<\/extra>/, "").replace(/%\{(\w+)(?::\.(\d+)f)?\}/g, (_, k, d) =>
    escaped(d !== undefined && typeof values[k] === "number" ? values[k].toFixed(Number(d)) : values[k] ?? ""));
  runs(main + (extra && extra[1] ? `<br><i>${extra[1]}</i>` : "")).forEach((line, n) => {
    if (n) node("br", null, parent);
    for (const r of line) {
      const span = node("span", null, parent);
      span.textContent = r.text;
      if (r.bold) span.style.fontWeight = "bold";
      if (r.italic) span.style.fontStyle = "italic";
    }
  });
}

class Chart {  // a bar/scatter plotly figure (its JSON, as chartOf reads it): axes, bars, lines, markers, legend on one canvas
  constructor(root, texts) {
    [this.canvas] = frame(this, root, texts, ["al-chart"], texts.png_chart);
    this.json = null;
  }

  update(part) {
    if (part.json === this.json) return;
    this.json = part.json;
    this.raw = JSON.parse(part.json);
    const f = (this.fig = chartOf(this.raw)), c = this.canvas, dpr = window.devicePixelRatio || 1;
    if (c.width !== Math.round(f.width * dpr) || c.height !== Math.round(f.height * dpr)) {
      c.width = Math.round(f.width * dpr);
      c.height = Math.round(f.height * dpr);
      this.box.style.width = c.style.width = `${f.width}px`;
      this.box.style.height = c.style.height = `${f.height}px`;
    }
    const ctx = c.getContext("2d"), [l, r, t, b] = f.margin, pw = f.width - l - r, items = this.legendItems(ctx, f.legend);
    let ph = f.height - t - b;
    const rows = items.length ? items[items.length - 1].row + 1 : 0;
    if (f.legend.row && rows) ph = Math.min(ph, (f.height - 6 - rows * 19 - t) / (1 - f.legend.y));  // plotly's automargin
    const at = (x, y) => [l + x * pw, t + (1 - y) * ph];  // paper coordinates → pixels
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, f.width, f.height);
    text(ctx, f.title, f.title_x, t / 2, { size: 15 });
    for (const p of f.panels) {
      const [[x0, x1], [y0, y1]] = p.domain, [bx, by] = at(x0, y1);
      p.box = [bx, by, (x1 - x0) * pw, (y1 - y0) * ph];
    }
    this.maps = f.panels.map((p) => this.axes(ctx, p));
    f.traces.forEach((tr) => this.trace(ctx, tr, this.maps[tr.panel]));
    for (const ln of f.lines) {
      const [, y, , h] = f.panels[ln.panel].box, m = this.maps[ln.panel];
      ctx.strokeStyle = ln.color;
      ctx.lineWidth = ln.width;
      ctx.setLineDash((DASHES[ln.dash] || []).map((d) => d * ln.width));
      ctx.beginPath();
      ctx.moveTo(m.x(ln.x0), y + (1 - ln.y0) * h);
      ctx.lineTo(m.x(ln.x1), y + (1 - ln.y1) * h);
      ctx.stroke();
    }
    for (const a of f.notes) text(ctx, a.text, ...at(a.x, a.y), { size: a.size, align: a.align, valign: a.valign });
    this.legend(ctx, f.legend, items, at(f.legend.x, f.legend.y));
    settle(this);
    c.alData = f.traces.length ? f.traces[0].y : null;  // for the browser tests and benchmark: the data drawn now
    c.alFigure = this.raw;
    c.dataset.revision = String(Number(c.dataset.revision || 0) + 1);
  }

  axes(ctx, p) {  // grid lines, tick labels and titles of one subplot; returns its value → pixel maps
    const [bx, by, bw, bh] = p.box, v = (a, u) => (a.log ? Math.log10(u) : u);
    const frac = (a, u) => (v(a, u) - a.range[0]) / (a.range[1] - a.range[0]);
    const map = { x: (u) => bx + frac(p.x, u) * bw, y: (u) => by + (1 - frac(p.y, u)) * bh, box: p.box };
    ctx.setLineDash([]);
    let wide = 0, deep = 0;
    for (const [u, label] of p.y.ticks) {
      const y = map.y(u);
      ctx.fillStyle = GRID_INK;
      ctx.fillRect(bx, y - (u === 0 ? 1 : 0.5), bw, u === 0 ? 2 : 1);
      wide = Math.max(wide, text(ctx, label, bx - 4, y, { size: p.y.size, align: "right" }));
    }
    for (const [u, label] of p.x.ticks) {
      const x = map.x(u), angle = (p.x.angle * Math.PI) / 180;
      if (!p.x.angle) { ctx.fillStyle = GRID_INK; ctx.fillRect(x - 0.5, by, 1, bh); }
      const w = text(ctx, escaped(label), x, by + bh + 4, { size: p.x.size, align: angle ? "right" : "center", valign: angle ? "middle" : "top", angle });
      deep = Math.max(deep, angle ? w * Math.abs(Math.sin(angle)) + 4 : p.x.size * 1.3);
    }
    text(ctx, p.x.title, bx + bw / 2, by + bh + 8 + deep, { size: 14, align: "center", valign: "top" });
    text(ctx, p.y.title, bx - wide - 18, by + bh / 2, { size: 14, align: "center", angle: -Math.PI / 2 });
    return map;
  }

  trace(ctx, tr, m) {  // bars from 0, or a line (gaps at null) with markers; its points' pixels kept for hover
    const pts = tr.x.map((x, i) => (x === null || tr.y[i] === null ? null : [m.x(x), m.y(tr.y[i])]));
    tr.pts = pts;
    const [bx, by, bw, bh] = m.box;
    ctx.save();
    ctx.globalAlpha = tr.opacity;
    if (tr.type === "bar") {
      const half = Math.abs(m.x(tr.width) - m.x(0)) / 2, base = m.y(0);
      ctx.beginPath();
      ctx.rect(bx, by, bw, bh);
      ctx.clip();
      pts.forEach((pt, i) => {
        if (!pt) return;
        ctx.fillStyle = Array.isArray(tr.color) ? tr.color[i] : tr.color;
        ctx.fillRect(pt[0] - half, Math.min(pt[1], base), 2 * half, Math.abs(base - pt[1]));
      });
      tr.half = half;
    } else {
      if (tr.mode.includes("lines")) {
        ctx.strokeStyle = tr.line;
        ctx.lineWidth = tr.lw;
        ctx.setLineDash((DASHES[tr.dash] || []).map((d) => d * tr.lw));
        ctx.beginPath();
        pts.forEach((pt, i) => { if (pt) (i && pts[i - 1] ? ctx.lineTo : ctx.moveTo).call(ctx, pt[0], pt[1]); });
        ctx.stroke();
      }
      if (tr.mode.includes("markers")) {
        const color = Array.isArray(tr.color) ? null : tr.color;
        pts.forEach((pt, i) => pt && marker(ctx, pt[0], pt[1], tr.symbol, tr.size, color || tr.color[i], tr.mlw));
      }
    }
    ctx.restore();
  }

  legendItems(ctx, g) {  // each legend entry's trace, width and place: x (px from the anchor) and row
    ctx.font = `12px ${FONT}`;
    let x = 0, row = 0;
    const f = this.fig, room = g.row ? f.width - f.margin[0] - g.x * (f.width - f.margin[0] - f.margin[1]) : Infinity;
    return g.entries.map((i) => {
      const tr = f.traces[i], w = 46 + ctx.measureText(runs(tr.name).flat().map((r) => r.text).join("")).width;
      if (g.row && x > 0 && x + w > room) { x = 0; row += 1; }
      const item = { tr, w, x, row };
      if (g.row) x += w; else row += 1;
      return item;
    });
  }

  legend(ctx, g, items, [ax, ay]) {  // a row under the plot, or a box in a corner: each entry's sample, then its name
    if (!items.length) return;
    const boxW = Math.max(...items.map((it) => it.w)), left = g.row ? ax : g.right ? ax - boxW : ax;
    if (!g.row) {
      ctx.fillStyle = "rgba(255,255,255,0.7)";
      ctx.fillRect(left, ay, boxW, items.length * 19 + 4);
    }
    for (const { tr, x, row } of items) {
      const sx = left + x + 4, y = ay + 12 + row * 19;
      const color = Array.isArray(tr.color) ? tr.color[0] : tr.color;
      if (tr.type === "bar") {
        ctx.globalAlpha = tr.opacity;
        ctx.fillStyle = color;
        ctx.fillRect(sx + 10, y - 6, 12, 12);
        ctx.globalAlpha = 1;
      } else {
        if (tr.mode.includes("lines")) {
          ctx.strokeStyle = tr.line;
          ctx.lineWidth = tr.lw;
          ctx.setLineDash((DASHES[tr.dash] || []).map((d) => d * tr.lw));
          ctx.beginPath(); ctx.moveTo(sx, y); ctx.lineTo(sx + 32, y); ctx.stroke();
        }
        if (tr.mode.includes("markers")) marker(ctx, sx + 16, y, tr.symbol, Math.min(tr.size, 10), color, tr.mlw);
      }
      text(ctx, tr.name, sx + 38, y, { size: 12 });
    }
  }

  summary() { return chartSummary(this.raw, this.texts); }

  tables() { return chartTables(this.raw, this.texts); }

  hover(e) {  // the bar under the pointer, else the nearest point within 20 px: its hover template's text
    const f = this.fig, at = this.canvas.getBoundingClientRect(), x = e.clientX - at.left, y = e.clientY - at.top;
    let best = null, dist = 20;
    f.traces.forEach((tr) => {
      const [bx, by, bw, bh] = f.panels[tr.panel].box;
      if (!tr.pts || x < bx - 10 || x > bx + bw + 10 || y < by - 10 || y > by + bh + 10) return;
      tr.pts.forEach((pt, i) => {
        if (!pt) return;
        const d = tr.type === "bar" ? (Math.abs(x - pt[0]) <= tr.half ? 19 : Infinity) : Math.hypot(x - pt[0], y - pt[1]);
        if (d < dist) { dist = d; best = [tr, i]; }
      });
    });
    if (!best) { this.tip.style.display = "none"; return; }
    this.tip.replaceChildren();
    hoverText(best[0], best[1], this.tip);
    Object.assign(this.tip.style, { display: "block", left: `${Math.min(x + 14, f.width - 170)}px`, top: `${y + 14}px` });
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

class Described {  // a figure that plotly.js draws in `div`: its name, description and table (the site's pages use it too)
  constructor(wrap, div, texts) {
    this.texts = texts;
    this.wrap = wrap;
    this.div = div;
    div.setAttribute("role", "figure");
    accessible(this, div);
  }

  describe(fig) {  // after each redraw, with the figure's {data, layout}
    this.raw = this.div.alFigure = fig;  // (for the browser tests: the figure described)
    this.fig = { title: titleOf(fig.layout || {}) };
    settle(this);
  }

  summary() { return chartSummary(this.raw, this.texts); }

  tables() { return chartTables(this.raw, this.texts); }

  static plotly(div, wrap, texts) {  // a figure plotly.js drew outside a panel, from div.data and div.layout
    const layout = decoded(div.layout || {}), data = decoded(div.data || []), meta = layout.meta || {};
    const kept = meta.kind === "head_grid"  // a head grid's weights (every other trace), not its mask traces
      ? data.filter((tr, k) => k % 2 === 0 && k < 2 * Number(meta.slots ?? 1) && tr.visible !== false) : data;
    const figure = div.alDescribed || (div.alDescribed = new Described(wrap, div, texts));
    figure.describe({ data: kept.map((tr) => (tr.type === "heatmap" ? tokens(tr, layout) : tr)), layout });
    return figure;
  }
}

// plotly.py writes a numpy array as {dtype, bdata (base64), shape}: as the nested lists a description reads.
const TYPES = { f8: Float64Array, f4: Float32Array, i1: Int8Array, u1: Uint8Array, i2: Int16Array, u2: Uint16Array,
  i4: Int32Array, u4: Uint32Array };
function decoded(value) {
  if (Array.isArray(value)) return value.map(decoded);
  if (ArrayBuffer.isView(value)) return Array.from(value);
  if (!value || typeof value !== "object") return value;
  if (typeof value.bdata === "string" && TYPES[value.dtype]) {
    const bytes = Uint8Array.from(atob(value.bdata), (ch) => ch.charCodeAt(0)), flat = Array.from(new TYPES[value.dtype](bytes.buffer));
    const cols = parseInt(String(value.shape ?? flat.length).split(",")[1], 10);
    return cols ? Array.from({ length: flat.length / cols }, (_, r) => flat.slice(r * cols, (r + 1) * cols)) : flat;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === "template" ? v : decoded(v)]));
}

function tokens(trace, layout) {  // a heatmap drawn at 0..n-1 with the tokens as tick text: its x and y as the tokens
  const out = { ...trace };
  for (const letter of ["x", "y"]) {
    const axis = layout[(trace[`${letter}axis`] || letter).replace(/^(.)(\d*)$/, "$1axis$2")] || {};
    const vals = axis.tickvals, names = axis.ticktext, n = letter === "y" ? arr(trace.z).length : arr(arr(trace.z)[0]).length;
    if (!Array.isArray(vals) || !Array.isArray(names)) continue;
    out[letter] = (Array.isArray(trace[letter]) ? trace[letter] : [...Array(n).keys()]).map((v) => {
      const k = vals.indexOf(v);
      return k >= 0 && names[k] !== undefined ? names[k] : v;
    });
  }
  return out;
}

// JupyterLab: the plotly figures a notebook shows as plain outputs (jupyterlab-plotly's renderer, outside any panel)
// get the same name, description and table, described once plotly has drawn them and again after each redraw.
// The first panel view of a notebook starts this, with its words (the kernel's language).
function describeOutputs(notebook, texts) {
  if (!notebook || (lib.notebooks ||= new WeakSet()).has(notebook)) return;
  lib.notebooks.add(notebook);
  let later = 0;
  const describe = (gd) => {
    try { Described.plotly(gd, gd.alWrap, texts); } catch (err) {
      if (!lib.warned) console.warn("[attnlib] a figure could not be described:", err);
      lib.warned = true;
    }
  };
  const scan = () => {
    later = 0;
    for (const gd of notebook.querySelectorAll(".jp-OutputArea-output.js-plotly-plot, .jp-OutputArea-output .js-plotly-plot")) {
      if (gd.alWrap || gd.closest(".al-panel, .al-plotly") || !Array.isArray(gd.data) || typeof gd.on !== "function") continue;
      gd.alWrap = node("div", "al-outside", gd);
      describe(gd);
      gd.on("plotly_afterplot", () => describe(gd));
    }
  };
  new MutationObserver(() => { later ||= setTimeout(scan, 300); }).observe(notebook, { childList: true, subtree: true });
  scan();
}

class PlotlyFigure extends Described {  // any other figure of a panel: Plotly.react redraws only what changed
  constructor(root, texts) {
    const wrap = node("div", "al-fig", root);
    super(wrap, node("div", "al-plotly", wrap), texts);
    this.json = null;
  }

  update(json, Plotly) {
    if (json === this.json) return;
    this.json = json;
    const fig = JSON.parse(json);
    Plotly.react(this.div, fig.data, fig.layout, CONFIG);
    this.describe(fig);
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
        parts = figures.map((f) => (f.kind === "grid" ? new Grid(el, model.get("texts"))
          : f.kind === "chart" ? new Chart(el, model.get("texts")) : new PlotlyFigure(el, model.get("texts"))));
      }
      figures.forEach((f, i) => { if (f.kind !== "plotly") parts[i].update(f); });
      const anyPlotly = figures.some((f) => f.kind === "plotly");
      // for the browser benchmark (attnlib/bench/browser): when this revision arrived and what drawing it cost
      el.alTiming = { revision, received, start, grids: performance.now(), python_ms: model.get("python_ms"),
        plotly_start: anyPlotly ? null : undefined, plotly_end: anyPlotly ? null : undefined };
      if (anyPlotly) plotly();
      el.dataset.revision = String(revision);
      nameHandles(el);
      describeOutputs(el.closest(".jp-Notebook"), model.get("texts"));
      model.send({ drawn: revision });
    };
    const schedule = () => { if (!frame) frame = requestAnimationFrame(draw); };
    const arrived = () => { received = performance.now(); schedule(); };
    model.on("change:revision", arrived);
    schedule();
    const late = setTimeout(() => nameHandles(el), 1000);  // the controls may render after the figures
    // a revision whose change event never reached this view (a busy page) is drawn within a second all the same
    const check = setInterval(() => { if (String(model.get("revision")) !== el.dataset.revision) schedule(); }, 1000);
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(later);
      clearTimeout(late);
      clearInterval(check);
      model.off("change:revision", arrived);
    };
  },
};
