// The Trace page: a canvas timeline of CPU threads and GPU streams. It only ever asks
// the server for windows (`/timeline?start_ns&end_ns&width_px&tracks`), debounced, and
// draws what comes back: slices, and merged buckets (count > 1) as such. Zoom with the
// wheel or + / -, pan by dragging or with the arrow keys, click for an event's details.
// Times are ns after the tracks' `t0_ns` (`tl.epoch0`, epoch ns), as the API gives them.

const ROW_PX = 18;
const LABEL_PX = 180;
const DEBOUNCE_MS = 120;

/** A colour for a name (stable hash). */
const nameColor = (name) => {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
  return "hsl(" + (Math.abs(h) % 360) + ",55%,62%)";
};

/** Rows of a track: one per nesting level. */
const lanes = (t) => Math.max(1, t.max_depth);

K.pages.trace = async (root, ctx) => {
  const workers = ctx.runInfo.workers;
  if (!K.bundle && workers.length > 1 && !ctx.option("worker")) {
    // A timeline shows one trace: the first worker's until another is picked.
    return ctx.setOption("worker", workers[0].id);
  }
  const tracks = await K.api(ctx.runPath("timeline/tracks") + ctx.timelineSel("?"));
  const tl = timelineState(tracks, ctx);
  K.timelineState = tl;
  timelineDom(root, tl);
  bindInput(tl);
  bindSearch(tl);
  const j = ctx.pendingJump();
  if (j && j.start_ns !== undefined) {
    // Document times are epoch ns; search matches are already timeline times.
    const shift = j.epoch ? tl.epoch0 : 0;
    const a = j.start_ns - shift;
    const b = j.end_ns - shift;
    const pad = (b - a) * 0.1;
    tl.status.dataset.jump = j.label || "";
    tl.canvas.dataset.jumpStart = String(a);
    tl.canvas.dataset.jumpEnd = String(b);
    tl.show(a - pad, b + pad);
    if (j.event !== undefined) showEvent(tl, j.event);
  } else {
    if (j) tl.status.dataset.jump = j.label || "";
    tl.schedule();
  }
};

/** The timeline's state: tracks and their rows, the window shown, the last answer. */
const timelineState = (tracks, ctx) => {
  const tl = {
    ctx,
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
    rowOf: new Map(),
    height: 0,
  };
  for (const t of tl.tracks) {
    tl.rowOf.set(t.id, tl.height);
    tl.height += lanes(t) * ROW_PX + 6;
  }
  tl.xOf = (ns) => LABEL_PX + ((ns - tl.start) / (tl.end - tl.start)) * (tl.canvas.width - LABEL_PX);
  tl.nsOf = (x) => tl.start + ((x - LABEL_PX) / (tl.canvas.width - LABEL_PX)) * (tl.end - tl.start);
  tl.schedule = () => {
    draw(tl);
    clearTimeout(tl.timer);
    tl.timer = setTimeout(() => load(tl), DEBOUNCE_MS);
  };
  /** Show [a, b], keeping at least 1 µs. */
  tl.show = (a, b) => {
    const span = Math.max(1000, b - a);
    tl.start = Math.max(tl.t0 - span / 2, a);
    tl.end = tl.start + span;
    tl.schedule();
  };
  return tl;
};

/** The page's elements: search, status line, canvas, details panel. */
const timelineDom = (root, tl) => {
  tl.search = el("input", { id: "trace-search", type: "search", placeholder: "search events (Enter)" });
  tl.results = el("ul", { id: "search-results", class: "search-results" });
  tl.status = el("p", { id: "timeline-status", class: "status" + (K.bundle ? " offline" : "") });
  tl.details = el("div", { id: "event-details", class: "details-panel" }, "Click a slice for its details.");
  tl.canvas = el("canvas", { id: "timeline", height: String(Math.max(120, tl.height)), tabindex: "0" });
  const wrap = el("div", { class: "timeline-wrap" }, tl.canvas);
  root.append(
    el("div", { class: "toolbar" }, tl.search, el("span", { class: "hint" }, "wheel or + / − zoom · drag or ← → pan · 0 reset")),
    tl.results,
    tl.status,
    wrap,
    tl.details,
  );
  tl.canvas.width = Math.max(300, wrap.clientWidth || 1000);
};

/** Track backgrounds and labels. */
const drawTracks = (tl, g) => {
  for (const t of tl.tracks) {
    const top = tl.rowOf.get(t.id);
    g.fillStyle = t.kind === "gpu" ? "#eef4fb" : "#f6f6f6";
    g.fillRect(0, top, tl.canvas.width, lanes(t) * ROW_PX);
    g.fillStyle = "#222";
    g.fillText(t.label.slice(0, 28), 4, top + 13);
  }
};

/** The slices of the last answer: names' colours, merged buckets grey and labelled. */
const drawSlices = (tl, g) => {
  const names = tl.data.names;
  for (const tr of tl.data.tracks) {
    const top = tl.rowOf.get(tr.id);
    if (top === undefined) continue;
    const s = tr.slices;
    for (let i = 0; i < s.start_ns.length; i++) {
      const x0 = tl.xOf(s.start_ns[i]);
      const x1 = Math.max(x0 + 1, tl.xOf(s.start_ns[i] + s.dur_ns[i]));
      const y = top + s.depth[i] * ROW_PX;
      const merged = s.count[i] > 1;
      g.fillStyle = merged ? "#9aa3ad" : nameColor(names[s.name[i]] || "");
      g.fillRect(x0, y + 1, x1 - x0, ROW_PX - 2);
      if (!merged && tl.highlight !== null && s.event[i] === tl.highlight) {
        g.strokeStyle = "#d62728";
        g.lineWidth = 2;
        g.strokeRect(x0, y + 1, x1 - x0, ROW_PX - 2);
      }
      if (x1 - x0 > 40) {
        g.fillStyle = "#111";
        const label = merged ? s.count[i] + " merged" : names[s.name[i]] || "";
        g.fillText(label.slice(0, Math.floor((x1 - x0) / 6)), x0 + 2, y + 13);
      }
    }
  }
};

/** Launch→kernel flows: a line from the launch to the kernel, a ring at the kernel. */
const drawFlows = (tl, g) => {
  g.strokeStyle = "rgba(40,40,160,0.6)";
  g.lineWidth = 1;
  for (const f of tl.data.flows || []) {
    const ya = tl.rowOf.get(f.from_track);
    const yb = tl.rowOf.get(f.to_track);
    if (ya === undefined || yb === undefined) continue;
    const xb = tl.xOf(f.to_ns);
    g.beginPath();
    g.moveTo(tl.xOf(f.from_ns), ya + ROW_PX / 2);
    g.lineTo(xb, yb + ROW_PX / 2);
    g.stroke();
    g.beginPath();
    g.arc(xb, yb + ROW_PX / 2, 2.5, 0, 2 * Math.PI);
    g.stroke();
  }
};

/** Redraw with the last answer, at the window now shown. */
const draw = (tl) => {
  const g = tl.canvas.getContext("2d");
  g.clearRect(0, 0, tl.canvas.width, tl.canvas.height);
  g.font = "11px sans-serif";
  drawTracks(tl, g);
  if (!tl.data) return;
  g.save();
  g.beginPath();
  g.rect(LABEL_PX, 0, tl.canvas.width - LABEL_PX, tl.canvas.height);
  g.clip();
  drawSlices(tl, g);
  drawFlows(tl, g);
  g.restore();
};

/** Ask for the window shown (a later request supersedes an earlier one). */
const load = async (tl) => {
  const seq = ++tl.seq;
  const ids = tl.tracks.map((t) => t.id).join(",");
  const q =
    "?start_ns=" + Math.floor(tl.start) + "&end_ns=" + Math.ceil(tl.end) + "&width_px=" + (tl.canvas.width - LABEL_PX) + "&tracks=" + ids + tl.ctx.timelineSel();
  try {
    const data = await K.api(tl.ctx.runPath("timeline") + q);
    if (seq !== tl.seq) return;
    tl.data = data;
    const last = K.apiLog[K.apiLog.length - 1];
    let slices = 0;
    for (const tr of data.tracks) slices += tr.slices.start_ns.length;
    tl.status.textContent =
      "window " + K.fmtNs(tl.start) + " – " + K.fmtNs(tl.end) + " (" + K.fmtNs(tl.end - tl.start) + "), " + slices + " slices, " + K.fmtBytes(last.bytes) +
      (K.bundle ? " · offline: detail limited to the windows embedded in this file (" + K.fmtNs(data.end_ns - data.start_ns) + " window)" : "");
    tl.canvas.dataset.start = String(tl.start);
    tl.canvas.dataset.end = String(tl.end);
    draw(tl);
  } catch (e) {
    tl.status.textContent = e.message;
  }
};

/** Wheel and keys zoom, dragging pans, a click picks a slice. */
const bindInput = (tl) => {
  const c = tl.canvas;
  const zoom = (factor, atX) => {
    const at = tl.nsOf(atX === undefined ? (LABEL_PX + c.width) / 2 : atX);
    tl.show(at - (at - tl.start) * factor, at + (tl.end - at) * factor);
  };
  const pan = (dxPx) => {
    const d = (dxPx / (c.width - LABEL_PX)) * (tl.end - tl.start);
    tl.show(tl.start + d, tl.end + d);
  };
  c.addEventListener("wheel", (e) => {
    e.preventDefault();
    zoom(e.deltaY > 0 ? 1.25 : 0.8, e.offsetX);
  });
  let drag = null;
  c.addEventListener("mousedown", (e) => (drag = { x: e.offsetX, moved: false }));
  c.addEventListener("mousemove", (e) => {
    if (!drag || Math.abs(e.offsetX - drag.x) <= 2) return;
    drag.moved = true;
    pan(drag.x - e.offsetX);
    drag.x = e.offsetX;
  });
  c.addEventListener("mouseup", (e) => {
    if (drag && !drag.moved) pick(tl, e.offsetX, e.offsetY);
    drag = null;
  });
  c.addEventListener("keydown", (e) => {
    const keys = { "+": () => zoom(0.5), "=": () => zoom(0.5), "-": () => zoom(2), ArrowLeft: () => pan(-100), ArrowRight: () => pan(100), 0: () => tl.show(tl.t0, tl.t1) };
    if (!keys[e.key]) return;
    e.preventDefault();
    keys[e.key]();
  });
};

/** The slice under a point: its details, or a merged bucket zoomed into. */
const pick = (tl, x, y) => {
  if (!tl.data || x < LABEL_PX) return;
  const ns = tl.nsOf(x);
  const slack = (2 * (tl.end - tl.start)) / tl.canvas.width;
  for (const tr of tl.data.tracks) {
    const top = tl.rowOf.get(tr.id);
    if (top === undefined) continue;
    const depth = Math.floor((y - top) / ROW_PX);
    const s = tr.slices;
    for (let i = 0; i < s.start_ns.length; i++) {
      if (s.depth[i] !== depth || s.start_ns[i] - slack > ns || s.start_ns[i] + s.dur_ns[i] + slack < ns) continue;
      if (s.count[i] > 1) return tl.show(s.start_ns[i], s.start_ns[i] + s.dur_ns[i]);
      return showEvent(tl, s.event[i], { name: tl.data.names[s.name[i]], start_ns: s.start_ns[i], dur_ns: s.dur_ns[i] });
    }
  }
};

/** An event's details (`events/{id}`); offline, what the window holds of its slice. */
const showEvent = async (tl, id, slice) => {
  tl.highlight = id;
  draw(tl);
  const d = tl.details;
  d.textContent = "";
  if (K.bundle && slice) {
    return d.append(el("h3", {}, slice.name), K.stats([["start", K.fmtNs(slice.start_ns) + " after the trace's start"], ["duration", K.fmtNs(slice.dur_ns), "dur"]]));
  }
  try {
    const ev = await K.api(tl.ctx.runPath("events/" + id) + tl.ctx.timelineSel("?"));
    d.append(
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
    d.textContent = e.message;
  }
};

/** Search (Enter): matches listed, a click shows one. */
const bindSearch = (tl) => {
  tl.search.addEventListener("keydown", async (e) => {
    if (e.key !== "Enter" || !tl.search.value) return;
    const list = tl.results;
    list.textContent = "";
    try {
      const r = await K.api(tl.ctx.runPath("search") + "?q=" + encodeURIComponent(tl.search.value) + "&limit=50" + tl.ctx.timelineSel());
      for (const m of r.matches) {
        const li = el("li", { class: "clickable" }, m.name + " · " + K.fmtNs(m.dur_ns) + " at " + K.fmtNs(m.start_ns));
        li.addEventListener("click", () => {
          tl.show(m.start_ns - m.dur_ns, m.start_ns + 2 * m.dur_ns);
          showEvent(tl, m.event);
        });
        list.append(li);
      }
      if (r.truncated) list.append(el("li", {}, "… more matches"));
      if (!r.matches.length) list.append(el("li", {}, "no match"));
    } catch (err) {
      list.append(el("li", {}, err.message));
    }
  });
};
