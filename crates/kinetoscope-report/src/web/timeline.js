// The Trace page: a canvas timeline of CPU threads and GPU streams. It only ever asks
// the server for windows (`/timeline?start_ns&end_ns&width_px&tracks`), debounced, and
// draws what comes back: slices, and merged buckets (count > 1) as such. Zoom with the
// wheel or + / -, pan by dragging or with the arrow keys, click for an event's details.

const ROW_PX = 18;
const LABEL_PX = 180;
const DEBOUNCE_MS = 120;

/** A colour for a name (stable hash). */
const nameColor = (name) => {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  return "hsl(" + (Math.abs(h) % 360) + ",55%,62%)";
};

K.pages.trace = async (root, ctx) => {
  const workers = ctx.runInfo.workers;
  if (!K.bundle && workers.length > 1 && !ctx.option("worker")) {
    // A timeline shows one trace: the first worker's until another is picked.
    return ctx.setOption("worker", workers[0].id);
  }
  const tracks = await K.api(ctx.runPath("timeline/tracks") + ctx.timelineSel("?"));
  // Timeline times are ns after `epoch0` (the trace's first span, epoch ns).
  const tl = {
    tracks: tracks.tracks,
    epoch0: tracks.t0_ns,
    t0: 0,
    t1: tracks.t1_ns,
    start: 0,
    end: tracks.t1_ns,
    data: null,
    timer: null,
    seq: 0,
    highlight: null,
  };
  K.timelineState = tl;
  // Rows: each track's lanes (depth 0..max_depth).
  let y = 0;
  tl.rowOf = new Map();
  for (const t of tl.tracks) {
    tl.rowOf.set(t.id, y);
    y += Math.max(1, t.max_depth) * ROW_PX + 6;
  }
  const height = Math.max(120, y);
  const search = el("input", { id: "trace-search", type: "search", placeholder: "search events (Enter)" });
  const results = el("ul", { id: "search-results", class: "search-results" });
  const status = el("p", { id: "timeline-status", class: "status" });
  const details = el("div", { id: "event-details", class: "details-panel" }, "Click a slice for its details.");
  const canvas = el("canvas", { id: "timeline", height: String(height) });
  const wrap = el("div", { class: "timeline-wrap" }, canvas);
  root.append(
    el("div", { class: "toolbar" }, search, el("span", { class: "hint" }, "wheel or + / − zoom · drag or ← → pan · 0 reset")),
    results,
    status,
    wrap,
    details,
  );
  if (K.bundle) status.classList.add("offline");
  const width = () => Math.max(300, wrap.clientWidth || 1000);
  canvas.width = width();

  const xOf = (ns) => LABEL_PX + ((ns - tl.start) / (tl.end - tl.start)) * (canvas.width - LABEL_PX);
  const nsOf = (x) => tl.start + ((x - LABEL_PX) / (canvas.width - LABEL_PX)) * (tl.end - tl.start);

  const draw = () => {
    const g = canvas.getContext("2d");
    g.clearRect(0, 0, canvas.width, canvas.height);
    g.font = "11px sans-serif";
    for (const t of tl.tracks) {
      const top = tl.rowOf.get(t.id);
      g.fillStyle = t.kind === "gpu" ? "#eef4fb" : "#f6f6f6";
      g.fillRect(0, top, canvas.width, Math.max(1, t.max_depth) * ROW_PX);
      g.fillStyle = "#222";
      g.fillText(t.label.slice(0, 28), 4, top + 13);
    }
    if (!tl.data) return;
    const names = tl.data.names;
    g.save();
    g.beginPath();
    g.rect(LABEL_PX, 0, canvas.width - LABEL_PX, canvas.height);
    g.clip();
    for (const tr of tl.data.tracks) {
      const top = tl.rowOf.get(tr.id);
      if (top === undefined) continue;
      const s = tr.slices;
      for (let i = 0; i < s.start_ns.length; i++) {
        const x0 = xOf(s.start_ns[i]);
        const x1 = Math.max(x0 + 1, xOf(s.start_ns[i] + s.dur_ns[i]));
        const yy = top + s.depth[i] * ROW_PX;
        const merged = s.count[i] > 1;
        g.fillStyle = merged ? "#9aa3ad" : nameColor(names[s.name[i]] || "");
        g.fillRect(x0, yy + 1, x1 - x0, ROW_PX - 2);
        if (!merged && tl.highlight !== null && s.event[i] === tl.highlight) {
          g.strokeStyle = "#d62728";
          g.lineWidth = 2;
          g.strokeRect(x0, yy + 1, x1 - x0, ROW_PX - 2);
        }
        if (x1 - x0 > 40) {
          g.fillStyle = "#111";
          const label = merged ? s.count[i] + " merged" : names[s.name[i]] || "";
          g.fillText(label.slice(0, Math.floor((x1 - x0) / 6)), x0 + 2, yy + 13);
        }
      }
    }
    g.strokeStyle = "rgba(40,40,160,0.6)";
    g.lineWidth = 1;
    for (const f of tl.data.flows || []) {
      const ya = tl.rowOf.get(f.from_track);
      const yb = tl.rowOf.get(f.to_track);
      if (ya === undefined || yb === undefined) continue;
      const xa = xOf(f.from_ns);
      const xb = xOf(f.to_ns);
      g.beginPath();
      g.moveTo(xa, ya + ROW_PX / 2);
      g.lineTo(xb, yb + ROW_PX / 2);
      g.stroke();
      g.beginPath();
      g.arc(xb, yb + ROW_PX / 2, 2.5, 0, 2 * Math.PI);
      g.stroke();
    }
    g.restore();
  };

  const load = async () => {
    const seq = ++tl.seq;
    const ids = tl.tracks.map((t) => t.id).join(",");
    const q = "?start_ns=" + Math.floor(tl.start) + "&end_ns=" + Math.ceil(tl.end) + "&width_px=" + (canvas.width - LABEL_PX) + "&tracks=" + ids + ctx.timelineSel();
    try {
      const data = await K.api(ctx.runPath("timeline") + q);
      if (seq !== tl.seq) return;
      tl.data = data;
      const last = K.apiLog[K.apiLog.length - 1];
      let slices = 0;
      for (const tr of data.tracks) slices += tr.slices.start_ns.length;
      status.textContent =
        "window " + K.fmtNs(tl.start - tl.t0) + " – " + K.fmtNs(tl.end - tl.t0) + " (" + K.fmtNs(tl.end - tl.start) + "), " + slices + " slices, " + K.fmtBytes(last.bytes) +
        (K.bundle ? " · offline: detail limited to the windows embedded in this file (" + K.fmtNs(data.end_ns - data.start_ns) + " window)" : "");
      canvas.dataset.start = String(tl.start);
      canvas.dataset.end = String(tl.end);
      draw();
    } catch (e) {
      status.textContent = e.message;
    }
  };
  const schedule = () => {
    draw();
    clearTimeout(tl.timer);
    tl.timer = setTimeout(load, DEBOUNCE_MS);
  };
  /** Show [a, b] (clamped to the trace), keeping at least 1 µs. */
  tl.show = (a, b) => {
    const span = Math.max(1000, b - a);
    tl.start = Math.max(tl.t0 - span / 2, a);
    tl.end = tl.start + span;
    schedule();
  };
  const zoom = (factor, atX) => {
    const at = nsOf(atX === undefined ? (LABEL_PX + canvas.width) / 2 : atX);
    tl.show(at - (at - tl.start) * factor, at + (tl.end - at) * factor);
  };
  const pan = (dxPx) => {
    const d = (dxPx / (canvas.width - LABEL_PX)) * (tl.end - tl.start);
    tl.show(tl.start + d, tl.end + d);
  };
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    zoom(e.deltaY > 0 ? 1.25 : 0.8, e.offsetX);
  });
  let drag = null;
  canvas.addEventListener("mousedown", (e) => (drag = { x: e.offsetX, moved: false }));
  canvas.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const dx = e.offsetX - drag.x;
    if (Math.abs(dx) > 2) {
      drag.moved = true;
      pan(-dx);
      drag.x = e.offsetX;
    }
  });
  canvas.addEventListener("mouseup", (e) => {
    if (drag && !drag.moved) pick(e.offsetX, e.offsetY);
    drag = null;
  });
  canvas.tabIndex = 0;
  canvas.addEventListener("keydown", (e) => {
    const k = { "+": () => zoom(0.5), "=": () => zoom(0.5), "-": () => zoom(2), ArrowLeft: () => pan(-100), ArrowRight: () => pan(100), 0: () => tl.show(tl.t0, tl.t1) }[e.key];
    if (k) {
      e.preventDefault();
      k();
    }
  });

  /** The slice under a point: its details, or a merged bucket zoomed into. */
  const pick = async (x, y) => {
    if (!tl.data || x < LABEL_PX) return;
    const ns = nsOf(x);
    for (const tr of tl.data.tracks) {
      const top = tl.rowOf.get(tr.id);
      if (top === undefined) continue;
      const depth = Math.floor((y - top) / ROW_PX);
      const s = tr.slices;
      for (let i = 0; i < s.start_ns.length; i++) {
        const slack = (2 * (tl.end - tl.start)) / canvas.width;
        if (s.depth[i] !== depth || s.start_ns[i] - slack > ns || s.start_ns[i] + s.dur_ns[i] + slack < ns) continue;
        if (s.count[i] > 1) return tl.show(s.start_ns[i], s.start_ns[i] + s.dur_ns[i]);
        return showEvent(s.event[i], { name: tl.data.names[s.name[i]], start_ns: s.start_ns[i], dur_ns: s.dur_ns[i] });
      }
    }
  };
  const showEvent = async (id, slice) => {
    tl.highlight = id;
    draw();
    details.textContent = "";
    if (K.bundle && slice) {
      // Offline: what the embedded window says of the slice (no event index here).
      return details.append(el("h3", {}, slice.name), K.stats([["start", K.fmtNs(slice.start_ns) + " after the trace's start"], ["duration", K.fmtNs(slice.dur_ns), "dur"]]));
    }
    try {
      const ev = await K.api(ctx.runPath("events/" + id) + ctx.timelineSel("?"));
      details.append(
        el("h3", {}, ev.name),
        K.stats([
          ["category", ev.category],
          ["start", K.fmtNs(ev.start_ns) + " after the trace's start"],
          ["duration", K.fmtNs(ev.dur_ns), "dur"],
          ["track", String(ev.track)],
        ]),
        el("pre", { class: "args" }, JSON.stringify(ev.args, null, 2)),
      );
    } catch (e) {
      details.textContent = e.message;
    }
  };
  search.addEventListener("keydown", async (e) => {
    if (e.key !== "Enter" || !search.value) return;
    results.textContent = "";
    try {
      const r = await K.api(ctx.runPath("search") + "?q=" + encodeURIComponent(search.value) + "&limit=50" + ctx.timelineSel());
      for (const m of r.matches) {
        const li = el("li", { class: "clickable" }, m.name + " · " + K.fmtNs(m.dur_ns) + " at " + K.fmtNs(m.start_ns));
        li.addEventListener("click", () => {
          tl.show(m.start_ns - m.dur_ns, m.start_ns + 2 * m.dur_ns);
          showEvent(m.event);
        });
        results.append(li);
      }
      if (r.truncated) results.append(el("li", {}, "… more matches"));
      if (!r.matches.length) results.append(el("li", {}, "no match"));
    } catch (err) {
      results.append(el("li", {}, err.message));
    }
  });

  const j = ctx.pendingJump();
  if (j && j.start_ns !== undefined) {
    // Document times are epoch ns; search matches are already timeline times.
    const shift = j.epoch ? tl.epoch0 : 0;
    const a = j.start_ns - shift;
    const b = j.end_ns - shift;
    const pad = (b - a) * 0.1;
    status.dataset.jump = j.label || "";
    canvas.dataset.jumpStart = String(a);
    canvas.dataset.jumpEnd = String(b);
    tl.show(a - pad, b + pad);
    if (j.event !== undefined) showEvent(j.event);
  } else {
    if (j) status.dataset.jump = j.label || "";
    schedule();
  }
};
