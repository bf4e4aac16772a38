// kinetoscope web app: the shared core. Formatting (units only: every number shown is a
// field of an API document), DOM building (text always through textContent: traces are
// untrusted) and the data layer `api(path)`, online (fetch with the token) or offline
// (the answers embedded in the page by `kinetoscope report --html`).
"use strict";

const K = {};
window.Kinetoscope = K;

// ---- formatting -------------------------------------------------------------------

/** ns → "1.23 ms" (µs, ms or s). */
K.fmtNs = (ns) => {
  if (ns === null || ns === undefined || !isFinite(ns)) return "–";
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
  if (a >= 1e6) return (ns / 1e6).toFixed(2) + " ms";
  if (a >= 1e3) return (ns / 1e3).toFixed(1) + " µs";
  return Math.round(ns) + " ns";
};

/** Bytes → binary units. */
K.fmtBytes = (b) => {
  if (b === null || b === undefined || !isFinite(b)) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = Math.abs(b);
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return (b < 0 ? "-" : "") + (u === 0 ? String(v) : v.toFixed(1)) + " " + units[u];
};

/** A 0–1 share → "12.3 %". */
K.fmtShare = (s) => (s === null || s === undefined || !isFinite(s) ? "–" : (s * 100).toFixed(1) + " %");

/** A count or plain number. */
K.fmtNum = (n) => {
  if (n === null || n === undefined) return "–";
  if (typeof n !== "number") return String(n);
  return Number.isInteger(n) ? n.toLocaleString("en-US") : n.toFixed(2);
};

/** Any JSON value as short text (arrays of numbers as [a, b, c]). */
K.fmtAny = (v) => {
  if (v === null || v === undefined) return "–";
  if (Array.isArray(v)) return "[" + v.join(", ") + "]";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
};

// ---- DOM -------------------------------------------------------------------------

/** An element: `attrs` are set as attributes (`on*` functions as listeners), children
 *  are elements or strings (always text nodes, never markup). */
K.el = (tag, attrs, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
  return e;
};

/** A table: `cols` are {key, label, fmt, num}; rows sortable by clicking a header and
 *  filtered by `filter` (text). Returns the table element. */
K.table = (cols, rows, opts) => {
  const o = opts || {};
  let sortKey = o.sortKey || null;
  let desc = true;
  let filter = "";
  const tbody = K.el("tbody");
  const head = K.el("tr");
  const table = K.el("table", { class: "data" + (o.cls ? " " + o.cls : "") }, K.el("thead", {}, head), tbody);
  const render = () => {
    tbody.textContent = "";
    let shown = rows;
    if (filter) {
      const f = filter.toLowerCase();
      shown = rows.filter((r) => cols.some((c) => String(r[c.key] ?? "").toLowerCase().includes(f)));
    }
    if (sortKey) {
      const c = cols.find((x) => x.key === sortKey);
      shown = shown.slice().sort((a, b) => {
        const x = c.sortValue ? c.sortValue(a) : a[sortKey];
        const y = c.sortValue ? c.sortValue(b) : b[sortKey];
        const cmp = typeof x === "number" && typeof y === "number" ? x - y : String(x ?? "").localeCompare(String(y ?? ""));
        return desc ? -cmp : cmp;
      });
    }
    for (const r of shown) {
      const tr = K.el("tr", o.onRow ? { class: "clickable", title: o.rowTitle || "" } : {});
      if (o.onRow) tr.addEventListener("click", () => o.onRow(r));
      for (const c of cols) {
        const v = c.get ? c.get(r) : r[c.key];
        tr.appendChild(K.el("td", { class: c.num ? "num" : "", "data-key": c.key }, c.fmt ? c.fmt(v, r) : K.fmtAny(v)));
      }
      tbody.appendChild(tr);
    }
    table.dataset.rows = String(shown.length);
  };
  for (const c of cols) {
    const th = K.el("th", { class: c.num ? "num" : "", title: "sort by " + c.label }, c.label);
    th.addEventListener("click", () => {
      if (sortKey === c.key) desc = !desc;
      else {
        sortKey = c.key;
        desc = !!c.num;
      }
      render();
    });
    head.appendChild(th);
  }
  table.setFilter = (text) => {
    filter = text;
    render();
  };
  render();
  return table;
};

/** A labelled list of key numbers. */
K.stats = (pairs) =>
  K.el("dl", { class: "stats" }, pairs.flatMap(([k, v, key]) => [K.el("dt", {}, k), K.el("dd", key ? { "data-key": key } : {}, v)]));

/** Horizontal bars of the top rows: `value` gives a row's number, `label` its name. */
K.bars = (rows, label, value, fmt) => {
  const max = Math.max(1, ...rows.map(value));
  return K.el(
    "div",
    { class: "bars" },
    rows.map((r) =>
      K.el(
        "div",
        { class: "bar-row" },
        K.el("span", { class: "bar-label", title: label(r) }, label(r)),
        K.el("span", { class: "bar-track" }, K.el("span", { class: "bar", style: "width:" + ((100 * value(r)) / max).toFixed(2) + "%" })),
        K.el("span", { class: "bar-value" }, fmt(value(r))),
      ),
    ),
  );
};

// ---- data layer ------------------------------------------------------------------

const bundleEl = document.getElementById("kinetoscope-bundle");
/** The embedded answers of an offline page, or null online. */
K.bundle = bundleEl && bundleEl.textContent.trim() ? JSON.parse(bundleEl.textContent) : null;
K.token = new URLSearchParams(location.search).get("token") || "";
/** Every API call the page made: {path, bytes, ms, offline}. */
K.apiLog = [];

/** An API error as an exception. */
class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}
K.ApiError = ApiError;

/** The answer to an API path (`/api/v1/...`): fetched online, looked up offline. */
K.api = async (path) => {
  const t0 = performance.now();
  let body;
  let bytes;
  if (K.bundle) {
    body = K.offlineAnswer(path);
    bytes = JSON.stringify(body).length;
  } else {
    const r = await fetch(path, { headers: { Authorization: "Bearer " + K.token } });
    const text = await r.text();
    bytes = text.length;
    try {
      body = JSON.parse(text);
    } catch (e) {
      throw new ApiError(r.status, path + ": not JSON (" + r.status + ")");
    }
  }
  K.apiLog.push({ path, bytes, ms: performance.now() - t0, offline: !!K.bundle });
  if (body && body.error) throw new ApiError(body.error.status, body.error.message);
  return body;
};

/** The embedded answer to `path`; a timeline window is the finest embedded window
 *  that covers the range asked for (the page says it is downsampled). */
K.offlineAnswer = (path) => {
  const r = K.bundle.responses;
  if (Object.prototype.hasOwnProperty.call(r, path)) return r[path];
  const [base, query] = path.split("?");
  if (base.endsWith("/timeline")) return K.offlineWindow(base, new URLSearchParams(query));
  const msg = base.startsWith("/api/v1/diff")
    ? "diff needs two runs: run `kinetoscope serve` with both, or `kinetoscope diff BASE NEW --html OUT`"
    : base.includes("/search")
      ? "search needs the server (`kinetoscope serve`); this offline page holds no event index"
      : "not in this offline page: " + path;
  return { error: { status: 404, message: msg } };
};

/** The finest embedded timeline window of the trace asked (`trace=I`) covering
 *  [start_ns, end_ns], else the widest. */
K.offlineWindow = (base, q) => {
  const start = Number(q.get("start_ns"));
  const end = Number(q.get("end_ns"));
  const windows = (K.bundle.timeline_windows || {})[base + "?trace=" + (q.get("trace") || "0")] || [];
  let best = null;
  for (const w of windows) {
    const covers = w.start_ns <= start && w.end_ns >= end;
    const span = w.end_ns - w.start_ns;
    if (covers && (!best || span < best.end_ns - best.start_ns)) best = w;
  }
  if (!best) best = windows.reduce((a, w) => (!a || w.end_ns - w.start_ns > a.end_ns - a.start_ns ? w : a), null);
  if (!best) return { error: { status: 404, message: "this offline page holds no timeline" } };
  return best;
};
