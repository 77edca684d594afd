/* A main panel on a static page: its HTML controls redraw its figures with Plotly.react from the states the
   site builder computed with the panel's own code (scripts/sitebuild/panels.py embeds them as JSON next to
   the panel). No kernel, no network. window.alStaticPanels[id] exposes the panel to tests and benchmarks. */
(function () {
  "use strict";
  var CONFIG = {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["sendChartToCloud"]};

  // plotly.js keeps (and may write into, e.g. an autorange) the objects it is given: every redraw gets its own copy
  // of the pieces, except the layout's template, which plotly only reads (the largest piece of a layout).
  function copy(obj) {
    if (obj === undefined) { return undefined; }
    return window.structuredClone ? window.structuredClone(obj) : JSON.parse(JSON.stringify(obj));
  }

  // True when two state entries ([trace indices, layout patch index]) name the same pieces.
  function same(a, b) {
    if (!a || !b || a[1] !== b[1] || a[0].length !== b[0].length) { return false; }
    for (var t = 0; t < a[0].length; t++) { if (a[0][t] !== b[0][t]) { return false; } }
    return true;
  }

  function Panel(root) {
    this.root = root;
    this.spec = JSON.parse(root.querySelector("script.al-states").textContent);
    this.divs = Array.prototype.map.call(root.querySelectorAll(".al-static-figures .plotly-graph-div"),
                                         function (d) { return d; });
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
    var state = this.spec.states[this.key()], self = this;
    if (state && !state.error) { state.forEach(function (entry, i) { self.shown[i] = entry; }); }
  };

  Panel.prototype.figureAt = function (entry, i) {
    /* {data, layout} of figure i from its state entry [trace indices, layout patch index]. */
    var pool = this.spec.pool, base = this.spec.base[i].layout, patch = pool[entry[1]], layout = {};
    Object.keys(base).forEach(function (name) { layout[name] = name === "template" ? base[name] : copy(base[name]); });
    Object.keys(patch).forEach(function (name) {
      if (patch[name] === null) { delete layout[name]; } else { layout[name] = copy(patch[name]); }
    });
    return {data: entry[0].map(function (t) { return copy(pool[t]); }), layout: layout};
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
    /* Draw state `key`: Plotly.react only the figures whose pieces differ from what they show, all in this frame. */
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
      var f = self.figureAt(entry, i);
      drawn.push(window.Plotly.react(self.divs[i], f.data, f.layout, CONFIG));
    });
    return Promise.all(drawn).then(function () {
      self.redraws += 1;
      self.lastMs = performance.now() - t0;
      self.root.dataset.alKey = key;
      self.root.dataset.alRedraws = String(self.redraws);
      return self.lastMs;
    });
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
