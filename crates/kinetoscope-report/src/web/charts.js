// Charts on uPlot (vendored, vendor/VENDOR.md): stacked step bars and memory curves.
// The stacks are drawn from running sums of the document's parts; legends and tooltips
// show each part's own value from the document.

/** Colours of the overview's breakdown parts. */
K.partColors = {
  kernel: "#4e79a7",
  memcpy: "#f28e2b",
  memset: "#edc948",
  communication: "#e15759",
  runtime: "#76b7b2",
  dataloader: "#b07aa1",
  cpu_exec: "#59a14f",
  other: "#bab0ac",
};

/** The chart width for a container. */
K.chartWidth = (host) => Math.max(400, (host.clientWidth || 900) - 20);

/** Stacked bars: one bar per x label, one layer per part. `parts` are names,
 *  `values[p][i]` the document's numbers, `fmt` their unit. */
K.stackedBars = (host, labels, parts, values, fmt) => {
  const xs = labels.map((_, i) => i);
  const stacked = [];
  let below = labels.map(() => 0);
  for (const p of parts) {
    const top = below.map((b, i) => b + (values[p][i] || 0));
    stacked.push(top);
    below = top;
  }
  // Draw the highest stack first so lower layers paint over it.
  const order = parts.map((_, k) => parts.length - 1 - k);
  const bars = uPlot.paths.bars({ size: [0.6, 60] });
  const opts = {
    width: K.chartWidth(host),
    height: 280,
    scales: { x: { time: false, range: [-0.5, labels.length - 0.5] } },
    axes: [
      { values: (u, ticks) => ticks.map((t) => (Number.isInteger(t) && labels[t] !== undefined ? labels[t] : "")) },
      { values: (u, ticks) => ticks.map(fmt), size: 80 },
    ],
    series: [{ label: "step", value: (u, v) => (v === null || labels[v] === undefined ? "–" : labels[v]) }].concat(
      order.map((k) => ({
        label: parts[k],
        fill: K.partColors[parts[k]] || "#888",
        stroke: K.partColors[parts[k]] || "#888",
        paths: bars,
        points: { show: false },
        value: (u, v, si, idx) => (idx === null ? "–" : fmt(values[parts[k]][idx])),
      })),
    ),
    legend: { live: true },
  };
  const data = [xs].concat(order.map((k) => stacked[k]));
  return new uPlot(opts, data, host);
};

/** A memory curve: `xs` (already in the axis' unit, `xLabel`), one stepped line per
 *  series (`{label, color, values}`), the peak (`{x, bytes}`) marked with its value. */
K.memoryChart = (host, xs, xLabel, series, peak) => {
  const markPeak = (u) => {
    if (!peak) return;
    const ctx = u.ctx;
    const x = u.valToPos(peak.x, "x", true);
    const y = u.valToPos(peak.bytes, "y", true);
    ctx.save();
    ctx.fillStyle = "#d62728";
    ctx.beginPath();
    ctx.arc(x, y, 5 * devicePixelRatio, 0, 2 * Math.PI);
    ctx.fill();
    ctx.font = 12 * devicePixelRatio + "px sans-serif";
    ctx.fillText("peak " + K.fmtBytes(peak.bytes), x + 8 * devicePixelRatio, y + 4 * devicePixelRatio);
    ctx.restore();
  };
  const opts = {
    width: K.chartWidth(host),
    height: 260,
    scales: { x: { time: false } },
    axes: [{ label: xLabel }, { values: (u, t) => t.map(K.fmtBytes), size: 80 }],
    series: [{ label: xLabel }].concat(
      series.map((s) => ({ label: s.label, stroke: s.color, width: 1.5, paths: uPlot.paths.stepped({ align: 1 }), value: (u, v) => K.fmtBytes(v) })),
    ),
    hooks: { draw: [markPeak] },
  };
  return new uPlot(opts, [xs].concat(series.map((s) => s.values)), host);
};
