// kinetoscope pstats --flame: an icicle of the estimated call tree. No library, no
// network; every name is inserted with textContent or as a property, never as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kinetoscope-data").textContent);
  var fns = data.functions, nodes = data.nodes;
  var kids = nodes.map(function () { return []; });
  nodes.forEach(function (n, i) { if (n.parent !== null) kids[n.parent].push(i); });
  var roots = [];
  nodes.forEach(function (n, i) { if (n.parent === null) roots.push(i); });
  var box = document.getElementById("flame");
  var info = document.getElementById("info");
  var ROW = 18;
  function hue(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return 20 + (h % 40);
  }
  function label(i) {
    var n = nodes[i];
    var share = data.total > 0 ? (100 * n.total / data.total).toFixed(1) : "0";
    return fns[n.func] + "  " + (n.total * 1000).toFixed(3) + " ms (" + share +
      " %), own " + (n.self_time * 1000).toFixed(3) + " ms";
  }
  function draw(top) {
    while (box.firstChild) box.removeChild(box.firstChild);
    var width = box.clientWidth || 1000;
    var list = top === null ? roots : [top];
    var sum = 0;
    list.forEach(function (i) { sum += nodes[i].total; });
    if (!(sum > 0)) return;
    var depth = 0;
    function place(i, x, d, scale) {
      var n = nodes[i], w = n.total * scale;
      if (w < 0.5) return;
      depth = Math.max(depth, d + 1);
      var el = document.createElement("div");
      el.className = "frame";
      el.style.left = x + "px";
      el.style.top = (d * ROW) + "px";
      el.style.width = Math.max(w - 1, 1) + "px";
      el.style.background = "hsl(" + hue(fns[n.func]) + ",85%,60%)";
      el.textContent = fns[n.func];
      el.title = label(i);
      el.addEventListener("click", function () { draw(i); });
      el.addEventListener("mouseover", function () { info.textContent = label(i); });
      box.appendChild(el);
      var cx = x;
      kids[i].forEach(function (k) { place(k, cx, d + 1, scale); cx += nodes[k].total * scale; });
    }
    var x = 0, scale = width / sum;
    list.forEach(function (i) { place(i, x, 0, scale); x += nodes[i].total * scale; });
    box.style.height = (depth * ROW + 4) + "px";
  }
  document.getElementById("reset").addEventListener("click", function () { draw(null); });
  window.addEventListener("resize", function () { draw(null); });
  draw(null);
})();
