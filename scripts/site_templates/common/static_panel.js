/* A main panel on a static page: its HTML controls redraw its figures from the states the site builder computed
   with the panel's own code (scripts/sitebuild/panels.py embeds them as JSON next to the panel), drawn as the live
   view in JupyterLab draws them: head grids, saturation figures and score histograms on canvases (window.alCanvas,
   assets/panel_view.js: attnlib's own view code), any other figure with Plotly.react. No kernel, no network.
   window.alStaticPanels[id] exposes the panel to tests and benchmarks. */
(function () {
  "use strict";
  var CONFIG = {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["sendChartToCloud"]};

  // plotly.js keeps (and may write into, e.g. an autorange) the objects it is given: every redraw gets its own copy
  // of the pieces, except the layout's template, which plotly only reads (the largest piece of a layout).
  function copy(obj) {
    if (obj === undefined) { return undefined; }
    return window.structuredClone ? window.structuredClone(obj) : JSON.parse(JSON.stringify(obj));
  }

  // The canvas Grid's input: a head grid's view (grid_view's layout; "cells": per shown head the indices, among the
  // figure's traces, of its weights and mask traces) with the weights [heads, N_q, N_k] and masked cells, flat.
  function gridInput(view, traces) {
    var first = traces[view.cells[0][0]].z, nq = first.length, nk = first[0].length, size = nq * nk;
    var weights = new Float32Array(view.cells.length * size), masked = null;
    view.cells.forEach(function (c, h) {
      var z = traces[c[0]].z, m = c[1] === null ? null : traces[c[1]].z;
      if (m && !masked) { masked = new Uint8Array(weights.length); }
      for (var i = 0; i < nq; i++) {
        for (var j = 0; j < nk; j++) {
          weights[h * size + i * nk + j] = z[i][j];
          if (m) { masked[h * size + i * nk + j] = m[i][j] ? 1 : 0; }
        }
      }
    });
    return Object.assign({}, view, {weights: weights, masked: masked});
  }

  // True when two state entries ([trace indices, layout patch index(, grid view index)]) name the same pieces.
  function same(a, b) {
    if (!a || !b || a[1] !== b[1] || a[2] !== b[2] || a[0].length !== b[0].length) { return false; }
    for (var t = 0; t < a[0].length; t++) { if (a[0][t] !== b[0][t]) { return false; } }
    return true;
  }

  function Panel(root) {
    this.root = root;
    this.spec = JSON.parse(root.querySelector("script.al-states").textContent);
    this.kinds = this.spec.kinds;  // per figure: "grid" or "chart" (a canvas) or "plotly"
    var boxes = root.querySelectorAll(".al-static-figures > .al-figure"), texts = this.spec.texts;
    this.divs = this.kinds.map(function (kind, i) { return boxes[i].querySelector(".plotly-graph-div"); });
    this.canvases = this.kinds.map(function (kind, i) {  // the live view's Grid and Chart, in the figure's box
      return kind === "grid" ? new window.alCanvas.Grid(boxes[i], texts)
        : kind === "chart" ? new window.alCanvas.Chart(boxes[i], texts) : null;
    });
    var divs = this.divs;  // a plotly figure's name, description in numbers and table (the live view's Described)
    this.described = this.kinds.map(function (kind, i) {
      return kind === "plotly" && window.alCanvas.Described ? new window.alCanvas.Described(boxes[i], divs[i], texts) : null;
    });
    this.inputs = this.spec.controls.map(function (c) {
      return root.querySelector('[data-al-control="' + c.name + '"]');
    });
    this.status = root.querySelector(".al-static-status");
    this.redraws = 0;
    this.shown = this.divs.map(function () { return null; });  // the state entry each figure shows
    this.lastMs = null;
    this.frame = 0;  // the animation frame that will draw the controls' latest values, while one is requested
    this.fresh = true;  // no draw since the last animation frame: a move is drawn at once
    this.pending = Promise.resolve(null);
    var self = this;
    this.inputs.forEach(function (input, k) {
      if (!input || input.disabled) { return; }
      input.addEventListener(input.type === "range" ? "input" : "change", function () { self.redraw(); });
      if (input.type === "range") { self.label(k); }
    });
  }

  Panel.prototype.index = function (k) {
    var input = this.inputs[k];
    if (!input) { return this.spec.controls[k].index; }
    if (input.type === "checkbox") { return this.spec.controls[k].values.indexOf(input.checked); }
    return parseInt(input.value, 10);
  };

  Panel.prototype.key = function () {
    var out = [];
    for (var k = 0; k < this.spec.controls.length; k++) { out.push(this.index(k)); }
    return out.join(",");
  };

  Panel.prototype.label = function (k) {
    var input = this.inputs[k], shown = this.root.querySelector('output[data-al-for="' + this.spec.controls[k].name + '"]');
    if (shown) { shown.textContent = this.spec.controls[k].labels[this.index(k)]; }
    return input;
  };

  Panel.prototype.start = function () {
    /* The page's plotly figures show the first state already: draw it on the canvases, describe the others. */
    var state = this.spec.states[this.key()], self = this;
    if (!state || state.error) { return; }
    state.forEach(function (entry, i) {
      if (self.canvases[i]) { self.paint(entry, i); }
      if (self.described[i]) { self.described[i].describe(self.figureAt(entry, i, false)); }
      self.shown[i] = entry;
    });
  };

  Panel.prototype.figureAt = function (entry, i, copied) {
    /* {data, layout} of figure i from its state entry [trace indices, layout patch index]: copies of the pieces
       when `copied` (for plotly), else the pieces themselves. */
    var pool = this.spec.pool, base = this.spec.base[i].layout, patch = pool[entry[1]], layout = {};
    var own = copied ? copy : function (obj) { return obj; };
    Object.keys(base).forEach(function (name) { layout[name] = name === "template" ? base[name] : own(base[name]); });
    Object.keys(patch).forEach(function (name) {
      if (patch[name] === null) { delete layout[name]; } else { layout[name] = own(patch[name]); }
    });
    return {data: entry[0].map(function (t) { return own(pool[t]); }), layout: layout};
  };

  Panel.prototype.paint = function (entry, i) {
    /* Draw figure i at its state entry: on its canvas (at once), or with Plotly.react (its promise). */
    var kind = this.kinds[i], f = this.figureAt(entry, i, kind === "plotly");
    if (kind === "grid") { return this.canvases[i].update(gridInput(this.spec.pool[entry[2]], f.data)); }
    if (kind === "chart") {  // the chart's own defaults, not plotly's template
      delete f.layout.template;
      return this.canvases[i].update({json: JSON.stringify(f)});
    }
    var drawn = window.Plotly.react(this.divs[i], f.data, f.layout, CONFIG);
    if (this.described[i]) { this.described[i].describe(f); }
    return drawn;
  };

  Panel.prototype.redraw = function () {
    /* A control moved. The first move after an animation frame is drawn at once; moves that come faster than
       frames (a drag, while plotly is still busy) are not drawn one by one: one animation frame draws the
       controls' values as they are then (the last move wins). Returns (and keeps in this.pending) the promise of
       that draw: the ms from the move to the figures redrawn. */
    var self = this, t0 = performance.now();
    for (var k = 0; k < this.inputs.length; k++) { if (this.inputs[k] && this.inputs[k].type === "range") { this.label(k); } }
    if (this.frame) { return this.pending; }  // a frame is already going to draw the latest values
    if (this.fresh) {
      this.pending = this.drawNow(t0);
      return this.pending;
    }
    this.pending = new Promise(function (resolve) {
      self.frame = window.requestAnimationFrame(function () {
        self.frame = 0;
        resolve(self.drawNow(t0));
      });
    });
    return this.pending;
  };

  Panel.prototype.drawNow = function (t0) {
    /* Draw the controls' current state; until the next animation frame, further moves wait for a frame. */
    var self = this;
    this.fresh = false;
    window.requestAnimationFrame(function () { self.fresh = true; });
    return this.draw(this.key(), t0);
  };

  Panel.prototype.draw = function (key, t0) {
    /* Draw state `key`: only the figures whose pieces differ from what they show, all in this frame. */
    var state = this.spec.states[key], self = this, drawn = [];
    if (!state || state.error) {
      this.status.textContent = state ? this.spec.text.failed.replace("{error}", state.error) : this.spec.text.no_state;
      this.root.dataset.alKey = key;
      return Promise.resolve(null);
    }
    this.status.textContent = "";
    state.forEach(function (entry, i) {  // a figure whose traces and layout did not change is left as it is
      if (same(entry, self.shown[i])) { return; }
      self.shown[i] = entry;
      drawn.push(self.paint(entry, i));
    });
    return Promise.all(drawn).then(function () {
      self.redraws += 1;
      self.lastMs = performance.now() - t0;
      self.root.dataset.alKey = key;
      self.root.dataset.alRedraws = String(self.redraws);
      return self.lastMs;
    });
  };

  var TEXTS = null;  // the view's words in the page's language (attnlib.widgets.view.texts()), once per page
  window.alDescribeFigure = function (id) {
    /* A plotly figure outside a panel, once plotly drew it: its name (layout title), its description in numbers
       and its "Show as table" toggle, from the figure it drew (outputs.py calls this after Plotly.newPlot), by the
       live view's own code (panel_view.js's Described.plotly, the same as for a notebook's plotly outputs). */
    var div = document.getElementById(id), words = document.getElementById("al-view-texts");
    if (!div || !words || !window.alCanvas || !window.alCanvas.Described) { return null; }
    TEXTS = TEXTS || JSON.parse(words.textContent);
    return window.alCanvas.Described.plotly(div, div.closest(".al-figure") || div.parentNode, TEXTS);
  };

  function start() {
    window.alStaticPanels = window.alStaticPanels || {};
    document.querySelectorAll(".al-static-panel[data-al-live]").forEach(function (root) {
      var panel = new Panel(root);
      panel.start();  // the figures on the page show the panel's first state
      window.alStaticPanels[root.id] = panel;
      root.dataset.alReady = "1";
    });
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
}());
