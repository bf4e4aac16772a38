// The app: header (runs, workers, spans, traces), navigation and the page router. The
// state lives in the URL's hash (`#page?run=…&ops.group_by=shape`), so a page can be
// linked and reloaded. `body[data-ready]` says when a page finished rendering ("yes")
// or failed ("error"), for people and for the browser tests.

const PAGES = [
  ["overview", "Overview"],
  ["ops", "Operators"],
  ["kernels", "Kernels"],
  ["memory", "Memory"],
  ["nvtx", "NVTX"],
  ["distributed", "Distributed"],
  ["diff", "Diff"],
  ["trace", "Trace"],
];

const state = { runs: [], jump: null, fresh: true };

/** The page and options in the hash. */
const route = () => {
  const [page, query] = location.hash.replace(/^#/, "").split("?");
  return { page: PAGES.some((p) => p[0] === page) ? page : "overview", params: new URLSearchParams(query || "") };
};

/** Go to `page` with `params` (a URLSearchParams). */
const go = (page, params) => {
  const q = params.toString();
  location.hash = "#" + page + (q ? "?" + q : "");
};

/** Fill the trace picker with the traces of the document a page shows. */
K.offerTraces = (paths) => {
  const sel = document.getElementById("trace-pick");
  const key = paths.join("\n");
  if (sel.dataset.paths === key) return;
  sel.dataset.paths = key;
  sel.textContent = "";
  const current = Number(route().params.get("trace") || 0);
  paths.forEach((p, i) => sel.append(el("option", { value: String(i), selected: i === current }, p)));
  sel.hidden = paths.length < 2;
};

/** The context a page renders with. */
const context = (r) => {
  const p = r.params;
  const run = p.get("run") || (state.runs[0] || {}).id;
  const sel = (first) => {
    const q = [];
    if (p.get("worker")) q.push("worker=" + encodeURIComponent(p.get("worker")));
    if (p.get("span")) q.push("span=" + encodeURIComponent(p.get("span")));
    return q.length ? (first || "&") + q.join("&") : "";
  };
  const runPath = (sub) => "/api/v1/runs/" + encodeURIComponent(run) + "/" + sub;
  const ctx = {
    run,
    runs: state.runs,
    runInfo: state.runs.find((x) => x.id === run) || { workers: [], spans: [] },
    trace: Number(p.get("trace") || 0),
    sel,
    runPath,
    view: (name, query) => runPath("views/" + name) + (query ? "?" + query + sel() : sel("?")),
    option: (k) => p.get(k),
    setOption: (k, v) => ctx.setOptions({ [k]: v }),
    setOptions: (o) => {
      const q = new URLSearchParams(p);
      for (const [k, v] of Object.entries(o)) q.set(k, v);
      go(r.page, q);
    },
    /** Offline: the trace of the timeline (its position); online: the worker/span. */
    timelineSel: (first) => (K.bundle ? (first || "&") + "trace=" + Number(p.get("trace") || 0) : sel(first)),
    jump: (win) => {
      state.jump = win;
      const q = new URLSearchParams(p);
      if (win.trace !== undefined) q.set("trace", String(win.trace));
      if (win.worker !== undefined) q.set("worker", win.worker);
      if (route().page === "trace" && q.toString() === p.toString()) render();
      else go("trace", q);
    },
    pendingJump: () => {
      const j = state.jump;
      state.jump = null;
      return j;
    },
    jumpToName: async (name) => {
      try {
        const hits = await K.api(runPath("search") + "?q=" + encodeURIComponent(name) + "&limit=1" + sel());
        const m = hits.matches[0];
        ctx.jump(m ? { start_ns: m.start_ns, end_ns: m.start_ns + Math.max(1, m.dur_ns), event: m.event, label: m.name } : { label: name + ": not found" });
      } catch (e) {
        ctx.jump({ label: name + ": " + e.message });
      }
    },
  };
  return ctx;
};

/** The header's run, worker and span pickers for the current run. */
const header = (r) => {
  const ctx = context(r);
  const runSel = document.getElementById("run-pick");
  runSel.textContent = "";
  for (const x of state.runs) runSel.append(el("option", { value: x.id, selected: x.id === ctx.run }, x.name + " (" + x.kind + ")"));
  const run = state.runs.find((x) => x.id === ctx.run) || { workers: [], spans: [] };
  for (const [id, list, key] of [["worker-pick", run.workers, "worker"], ["span-pick", run.spans, "span"]]) {
    const s = document.getElementById(id);
    s.textContent = "";
    s.append(el("option", { value: "" }, "all " + key + "s"));
    for (const w of list) s.append(el("option", { value: w.id, selected: w.id === r.params.get(key) }, w.name));
    s.hidden = list.length === 0;
  }
  for (const a of document.querySelectorAll("nav a")) {
    a.classList.toggle("active", a.dataset.page === r.page);
    const q = new URLSearchParams();
    for (const k of ["run", "worker", "span", "trace"]) if (r.params.get(k)) q.set(k, r.params.get(k));
    a.href = "#" + a.dataset.page + (q.toString() ? "?" + q : "");
  }
};

/** Render the page in the hash. */
const render = async () => {
  const r = route();
  if (!K.bundle && !state.fresh) {
    // Served: runs that appeared in a log dir since the last page show up.
    try {
      state.runs = (await K.api("/api/v1/runs")).runs;
    } catch (e) {
      // Keep the list we have; the page reports its own errors.
    }
  }
  state.fresh = false;
  header(r);
  const root = document.getElementById("page");
  root.textContent = "";
  document.body.dataset.page = r.page;
  document.body.dataset.ready = "no";
  try {
    await K.pages[r.page](root, context(r));
    document.body.dataset.ready = "yes";
  } catch (e) {
    root.append(el("p", { class: "error", id: "page-error" }, e.message));
    document.body.dataset.ready = "error";
  }
};

const start = async () => {
  const nav = document.getElementById("nav");
  for (const [id, label] of PAGES) nav.append(el("a", { href: "#" + id, "data-page": id }, label));
  const change = (key) => (e) => {
    const r = route();
    const q = new URLSearchParams(r.params);
    if (e.target.value) q.set(key, e.target.value);
    else q.delete(key);
    if (key === "run") ["worker", "span", "trace"].forEach((k) => q.delete(k));
    go(r.page, q);
  };
  document.getElementById("run-pick").addEventListener("change", change("run"));
  document.getElementById("worker-pick").addEventListener("change", change("worker"));
  document.getElementById("span-pick").addEventListener("change", change("span"));
  document.getElementById("trace-pick").addEventListener("change", change("trace"));
  if (K.bundle) document.getElementById("mode").textContent = "offline page: " + K.bundle.input;
  try {
    state.runs = (await K.api("/api/v1/runs")).runs;
  } catch (e) {
    document.getElementById("page").append(el("p", { class: "error", id: "page-error" }, e.message));
    document.body.dataset.ready = "error";
    return;
  }
  window.addEventListener("hashchange", render);
  render();
};

start();
