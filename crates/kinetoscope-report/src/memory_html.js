// kinetoscope memory chart: stacked areas from the JSON in #kinetoscope-data.
// Hand-written, no dependencies, no network. Wheel: zoom around the cursor;
// drag: zoom to the selection; double-click or "reset zoom": the whole range.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kinetoscope-data").textContent);
  var SVGNS = "http://www.w3.org/2000/svg";
  var root = document.getElementById("charts");

  function fmtBytes(b) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"];
    var neg = b < 0;
    var v = Math.abs(b);
    var u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    var s = u === 0 ? String(Math.round(v)) + " B" : v.toFixed(1) + " " + units[u];
    return neg ? "-" + s : s;
  }
  function fmtMs(ns) { return (ns / 1e6).toFixed(3) + " ms"; }
  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function div(cls, text, parent) {
    var e = document.createElement("div");
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function niceStep(range, n) {
    var raw = range / Math.max(1, n);
    var p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
    var m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }

  data.charts.forEach(function (c, ci) {
    var box = div("chart", undefined, root);
    box.id = "chart-" + ci;
    div("chart-title", c.title, box);
    if (c.note) { div("chart-note", c.note, box); }
    var n = c.times.length;
    var totals = c.values.map(function (row) {
      return row.reduce(function (a, b) { return a + b; }, 0);
    });
    // Legend (only categories that ever hold bytes, but all when none do).
    var used = c.categories.map(function (_, k) {
      return c.values.some(function (row) { return row[k] !== 0; });
    });
    if (!used.some(Boolean)) { used = used.map(function () { return true; }); }
    var legend = div("legend", undefined, box);
    c.categories.forEach(function (name, k) {
      if (!used[k]) { return; }
      var item = div("legend-item", undefined, legend);
      var sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = c.colors[k];
      item.appendChild(sw);
      var nm = document.createElement("span");
      nm.className = "legend-name";
      nm.textContent = name;
      item.appendChild(nm);
      if (c.peak) {
        var v = document.createElement("span");
        v.className = "legend-value";
        v.textContent = fmtBytes(c.peak.by_category[k]) + " at peak";
        item.appendChild(v);
      }
    });
    var peakLabel = div("peak-label", undefined, box);
    peakLabel.id = "peak-label-" + ci;
    if (c.peak) {
      peakLabel.textContent = "Peak: " + fmtBytes(c.peak.total) + " at +" + fmtMs(c.peak.t);
    } else {
      peakLabel.textContent = "No memory points";
    }
    var controls = div("controls", undefined, box);
    var reset = document.createElement("button");
    reset.textContent = "reset zoom";
    controls.appendChild(reset);
    div("hint", "wheel to zoom · drag to select a range · double-click to reset", controls);

    var W = 1100, H = 420, L = 80, R = 20, T = 20, B = 40;
    var svg = el("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, "class": "plot" }, box);
    var clip = el("clipPath", { id: "clip-" + ci }, el("defs", {}, svg));
    el("rect", { x: L, y: T, width: W - L - R, height: H - T - B }, clip);
    var axes = el("g", { "class": "axes" }, svg);
    var areas = el("g", { "clip-path": "url(#clip-" + ci + ")" }, svg);
    var marks = el("g", { "clip-path": "url(#clip-" + ci + ")" }, svg);
    var guide = el("line", { y1: T, y2: H - B, stroke: "#333", "stroke-width": 1, visibility: "hidden" }, svg);
    var sel = el("rect", { y: T, height: H - T - B, fill: "rgba(70,130,180,0.25)", visibility: "hidden" }, svg);
    var overlay = el("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "transparent", "class": "overlay" }, svg);
    var tip = div("tooltip", undefined, box);
    tip.style.display = "none";

    var t0 = n ? c.times[0] : 0;
    var t1 = n ? c.times[n - 1] : 1;
    if (t1 <= t0) { t1 = t0 + 1; }
    var view = [t0, t1];

    function x(t) { return L + (t - view[0]) / (view[1] - view[0]) * (W - L - R); }
    function tAt(px) { return view[0] + (px - L) / (W - L - R) * (view[1] - view[0]); }
    function indexAt(t) {
      var lo = 0, hi = n - 1;
      if (n === 0 || t < c.times[0]) { return -1; }
      while (lo < hi) {
        var mid = (lo + hi + 1) >> 1;
        if (c.times[mid] <= t) { lo = mid; } else { hi = mid - 1; }
      }
      return lo;
    }

    function draw() {
      while (areas.firstChild) { areas.removeChild(areas.firstChild); }
      while (marks.firstChild) { marks.removeChild(marks.firstChild); }
      while (axes.firstChild) { axes.removeChild(axes.firstChild); }
      var a = Math.max(0, indexAt(view[0]));
      var b = n - 1;
      while (b > a && c.times[b - 1] > view[1]) { b--; }
      var ymax = 1;
      for (var i = a; i <= b; i++) { ymax = Math.max(ymax, totals[i]); }
      ymax *= 1.08;
      function y(v) { return H - B - v / ymax * (H - T - B); }
      // Stacked step areas, bottom category first.
      var base = [];
      for (i = a; i <= b; i++) { base.push(0); }
      c.categories.forEach(function (name, k) {
        if (!used[k]) { return; }
        var top = [], d = "";
        for (var i2 = a; i2 <= b; i2++) { top.push(base[i2 - a] + Math.max(0, c.values[i2][k])); }
        var xs = [];
        for (i2 = a; i2 <= b; i2++) {
          var xa = Math.max(L - 1, x(c.times[i2]));
          var xb = i2 < b ? x(c.times[i2 + 1]) : W - R + 1;
          xs.push([xa, Math.min(W - R + 1, xb)]);
        }
        for (i2 = 0; i2 < xs.length; i2++) {
          d += (i2 === 0 ? "M" : "L") + xs[i2][0].toFixed(1) + "," + y(top[i2]).toFixed(1);
          d += "L" + xs[i2][1].toFixed(1) + "," + y(top[i2]).toFixed(1);
        }
        for (i2 = xs.length - 1; i2 >= 0; i2--) {
          d += "L" + xs[i2][1].toFixed(1) + "," + y(base[i2]).toFixed(1);
          d += "L" + xs[i2][0].toFixed(1) + "," + y(base[i2]).toFixed(1);
        }
        el("path", { d: d + "Z", fill: c.colors[k], "fill-opacity": 0.85, stroke: "none", "class": "area" }, areas).appendChild(
          el("title", {}, null)).textContent = name;
        base = top;
      });
      // Axes.
      el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#444" }, axes);
      el("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: "#444" }, axes);
      var ys = niceStep(ymax, 5);
      for (var v = 0; v <= ymax; v += ys) {
        el("line", { x1: L - 4, x2: W - R, y1: y(v), y2: y(v), stroke: "#ddd" }, axes);
        var ty = el("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "class": "tick" }, axes);
        ty.textContent = fmtBytes(v);
      }
      var xs2 = niceStep(view[1] - view[0], 8);
      for (var tv = Math.ceil(view[0] / xs2) * xs2; tv <= view[1]; tv += xs2) {
        el("line", { x1: x(tv), x2: x(tv), y1: H - B, y2: H - B + 4, stroke: "#444" }, axes);
        var tx = el("text", { x: x(tv), y: H - B + 18, "text-anchor": "middle", "class": "tick" }, axes);
        tx.textContent = (tv / 1e6).toFixed(xs2 < 1e6 ? 3 : 1);
      }
      var xl = el("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", "class": "axis-label" }, axes);
      xl.textContent = "time since first event (ms)";
      // Peak marker.
      if (c.peak && c.peak.t >= view[0] && c.peak.t <= view[1]) {
        var px = x(c.peak.t), py = y(c.peak.total);
        el("line", { x1: px, x2: px, y1: T, y2: H - B, stroke: "#c00", "stroke-dasharray": "4,3" }, marks);
        el("circle", { cx: px, cy: py, r: 4, fill: "#c00" }, marks);
        var pt = el("text", { x: Math.min(px + 6, W - R - 150), y: Math.max(T + 12, py - 8), "class": "peak-text" }, marks);
        pt.textContent = "peak " + fmtBytes(c.peak.total);
      }
    }

    function svgX(ev) {
      var r = svg.getBoundingClientRect();
      return (ev.clientX - r.left) * W / r.width;
    }
    var dragFrom = null;
    overlay.addEventListener("mousemove", function (ev) {
      var px = svgX(ev);
      if (dragFrom !== null) {
        sel.setAttribute("x", Math.min(dragFrom, px));
        sel.setAttribute("width", Math.abs(px - dragFrom));
        sel.setAttribute("visibility", "visible");
      }
      var i = indexAt(tAt(px));
      if (i < 0) { tip.style.display = "none"; guide.setAttribute("visibility", "hidden"); return; }
      guide.setAttribute("x1", px); guide.setAttribute("x2", px);
      guide.setAttribute("visibility", "visible");
      var lines = ["+" + fmtMs(c.times[i]) + " · total " + fmtBytes(totals[i])];
      c.categories.forEach(function (name, k) {
        if (used[k]) { lines.push(name + ": " + fmtBytes(c.values[i][k])); }
      });
      tip.textContent = "";
      lines.forEach(function (l, li) { div(li === 0 ? "tip-head" : "tip-row", l, tip); });
      tip.style.display = "block";
      tip.style.left = Math.min(ev.pageX + 14, window.innerWidth - 260) + "px";
      tip.style.top = (ev.pageY + 14) + "px";
    });
    overlay.addEventListener("mouseleave", function () {
      tip.style.display = "none";
      guide.setAttribute("visibility", "hidden");
    });
    overlay.addEventListener("mousedown", function (ev) { dragFrom = svgX(ev); ev.preventDefault(); });
    window.addEventListener("mouseup", function (ev) {
      if (dragFrom === null) { return; }
      var px = svgX(ev);
      sel.setAttribute("visibility", "hidden");
      if (Math.abs(px - dragFrom) > 4) {
        var a = tAt(Math.min(px, dragFrom)), b = tAt(Math.max(px, dragFrom));
        view = [Math.max(t0, a), Math.min(t1, b)];
        if (view[1] - view[0] < 1) { view[1] = view[0] + 1; }
        draw();
      }
      dragFrom = null;
    });
    overlay.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var at = tAt(svgX(ev));
      var f = ev.deltaY < 0 ? 0.8 : 1.25;
      var a = at - (at - view[0]) * f, b = at + (view[1] - at) * f;
      view = [Math.max(t0, a), Math.min(t1, b)];
      if (view[1] - view[0] < 1) { view[1] = view[0] + 1; }
      draw();
    }, { passive: false });
    function resetZoom() { view = [t0, t1]; draw(); }
    overlay.addEventListener("dblclick", resetZoom);
    reset.addEventListener("click", resetZoom);
    draw();
  });
  document.body.setAttribute("data-rendered", "yes");
})();
