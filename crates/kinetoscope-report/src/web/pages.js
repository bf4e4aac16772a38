// The pages: each asks the API for its documents (one engine document per view) and
// renders their fields. `ctx` = {run, trace (index into a document's traces), view(name,
// query), jump(window)}.

const el = K.el;

/** The part names of the overview's breakdown, in the document's order. */
const PARTS = ["kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other"];

/** The trace a multi-trace document shows (the worker picked in the header). */
K.pick = (doc, ctx) => {
  const ts = doc.traces || [];
  K.offerTraces(ts.map((t) => t.path));
  return ts[Math.min(ctx.trace, ts.length - 1)] || null;
};

/** A section with a heading. */
const section = (title, ...body) => el("section", {}, el("h2", {}, title), ...body);

/** The notes and warnings of a document, by kind (their numbers are in the JSON). */
const notes = (list) =>
  list && list.length ? el("ul", { class: "notes" }, list.map((n) => el("li", {}, n.kind + (Object.keys(n).length > 1 ? ": " + JSON.stringify(n) : "")))) : "";

// ---- Overview ----------------------------------------------------------------------

K.pages = {};

K.pages.overview = async (root, ctx) => {
  const [ov, report] = await Promise.all([K.api(ctx.view("overview")), K.api(ctx.view("report"))]);
  const t = K.pick(ov, ctx);
  if (!t) return root.append(el("p", {}, "No trace could be read."), notes(ov.errors));
  ctx.overviewTraces = ov.traces;
  const avg = t.average;
  root.append(
    section(
      "Steps",
      K.stats([
        ["steps", K.fmtNum(t.steps.length), "steps"],
        ["mean step", avg ? K.fmtNs(avg.dur_ns) : "–", "mean_step"],
        ["step source", t.step_source],
        ["worker", t.worker],
      ]),
      el("div", { id: "step-chart", class: "chart" }),
    ),
  );
  const values = {};
  for (const p of PARTS) values[p] = t.steps.map((s) => s.breakdown_ns[p]);
  K.stackedBars(document.getElementById("step-chart"), t.steps.map((s) => s.name), PARTS, values, K.fmtNs);
  if (avg) {
    const rows = PARTS.map((p) => ({ part: p, ns: avg.breakdown_ns[p], share: avg.share[p] }));
    root.append(
      section(
        "Average step breakdown",
        K.table(
          [
            { key: "part", label: "part" },
            { key: "ns", label: "mean per step", num: true, fmt: K.fmtNs },
            { key: "share", label: "share", num: true, fmt: K.fmtShare },
          ],
          rows,
          { cls: "breakdown" },
        ),
      ),
    );
  }
  root.append(
    section(
      "GPUs",
      t.gpus.length
        ? K.table(
            [
              { key: "id", label: "GPU", num: true },
              { key: "name", label: "name" },
              { key: "kernels", label: "kernels", num: true, fmt: K.fmtNum },
              { key: "utilization", label: "utilization", num: true, fmt: K.fmtShare },
              { key: "sm_efficiency", label: "est. SM efficiency", num: true, fmt: K.fmtShare },
              { key: "achieved_occupancy", label: "est. occupancy", num: true, fmt: K.fmtShare },
              { key: "tensor_core_ratio", label: "tensor cores", num: true, fmt: K.fmtShare },
            ],
            t.gpus,
            { cls: "gpus" },
          )
        : el("p", {}, "No GPU ran a kernel in this trace."),
    ),
    notes(t.warnings),
  );
  root.append(K.findingsSection(report, t, ctx));
};

/** The advisor's findings with evidence and fix; each can show its evidence on the
 *  timeline. */
K.findingsSection = (report, overviewTrace, ctx) => {
  const c = report.counts;
  const list = el("div", { class: "findings" });
  report.findings.forEach((f, i) => {
    const jump = el("button", { class: "jump", "data-finding": String(i) }, "Show in timeline");
    jump.addEventListener("click", () => K.jumpToFinding(f, overviewTrace, ctx));
    list.append(
      el(
        "article",
        { class: "finding " + f.severity, "data-id": f.id },
        el("h3", {}, el("span", { class: "sev" }, f.severity), " ", f.id + " ", el("span", { class: "title" }, f.title)),
        K.stats([
          ["impact per step", K.fmtNs(f.impact_ns_per_step), "impact"],
          ["share of step", K.fmtShare(f.impact_share), "impact_share"],
          ["steps", f.confidence.steps + " of " + f.confidence.of_steps],
          ...(f.across_ranks
            ? [
                ["ranks", f.confidence.ranks + " of " + f.confidence.of_ranks + ": " + f.across_ranks.seen_on, "ranks"],
                ["impact per step over them", "least " + K.fmtNs(f.across_ranks.least_impact_ns_per_step) + ", mean " + K.fmtNs(f.across_ranks.mean_impact_ns_per_step)],
                ["shown", f.across_ranks.worst_trace + (f.across_ranks.worst_rank != null ? " (rank " + f.across_ranks.worst_rank + ")" : "")],
              ]
            : [["trace", f.trace + (f.rank !== null && f.rank !== undefined ? " (rank " + f.rank + ")" : "")]]),
        ]),
        el("h4", {}, "Evidence"),
        el("ul", { class: "evidence" }, f.evidence.map((e) => el("li", {}, e))),
        el("h4", {}, "Fix"),
        el("p", { class: "fix" }, f.fix),
        el("p", { class: "details" }, f.details),
        jump,
      ),
    );
  });
  return section(
    "Findings",
    el("p", { class: "counts", "data-key": "counts" }, c.critical + " critical, " + c.warning + " warning, " + c.info + " info"),
    report.findings.length ? list : el("p", {}, "No findings."),
  );
};

/** Where a finding's evidence is on the timeline: the step its evidence names first
 *  (`ProfilerStep#N`, in the finding's own trace), else an event its evidence names
 *  (search), else the profiled steps' window. */
K.jumpToFinding = async (f, ov, ctx) => {
  const text = f.evidence.join("\n");
  const traces = ctx.overviewTraces || [];
  // A finding grouped across ranks shows its worst rank's trace.
  const path = f.across_ranks ? f.across_ranks.worst_trace : f.trace;
  const own = traces.findIndex((t) => t.path === path);
  const trace = own >= 0 ? traces[own] : ov;
  const at = (name) => {
    const m = new RegExp(name.replace(/[.*+?^${}()|[\]\\#]/g, "\\$&") + "(?![0-9])").exec(text);
    return m ? m.index : Infinity;
  };
  let named = null;
  for (const s of trace ? trace.steps : []) if (at(s.name) < (named ? at(named.name) : Infinity)) named = s;
  // Offline: the trace's position; online: its worker, when the run lists it.
  const worker = trace && ctx.runInfo.workers.find((w) => w.id === trace.worker);
  const where = K.bundle ? (own >= 0 ? { trace: own } : {}) : worker ? { worker: worker.id } : {};
  if (named) return ctx.jump({ start_ns: named.start_ns, end_ns: named.start_ns + named.dur_ns, epoch: true, label: f.id + ": " + named.name, ...where });
  for (const line of f.evidence) {
    const name = line.split(/: | ← /)[0].trim();
    if (!name || name.length > 200 || K.bundle) continue;
    try {
      const hits = await K.api(ctx.runPath("search") + "?q=" + encodeURIComponent(name) + "&limit=1" + ctx.timelineSel());
      if (hits.matches.length) {
        const m = hits.matches[0];
        return ctx.jump({ start_ns: m.start_ns, end_ns: m.start_ns + Math.max(m.dur_ns, 1), event: m.event, label: f.id + ": " + m.name });
      }
    } catch (e) {
      break;
    }
  }
  if (trace && trace.window_ns) return ctx.jump({ start_ns: trace.window_ns[0], end_ns: trace.window_ns[1], epoch: true, label: f.id + ": the profiled steps", ...where });
  return ctx.jump({ label: f.id + ": no time in its evidence" });
};

// ---- Operators and kernels ---------------------------------------------------------

const OP_GROUPS = ["name", "shape", "stack", "module"];
const KERNEL_GROUPS = ["name", "properties"];

/** A table page: group-by select, search box, top-N bars and the sortable table. */
const tablePage = (view, groups, cols, barKey, barLabel) => async (root, ctx) => {
  const group = ctx.option(view + ".group_by") || "name";
  const doc = await K.api(ctx.view(view, "group_by=" + group + "&top=100"));
  const t = K.pick(doc, ctx);
  const select = el("select", { id: view + "-group", "aria-label": "group by" }, groups.map((g) => el("option", { value: g, selected: g === group }, "group by " + g)));
  select.addEventListener("change", () => ctx.setOption(view + ".group_by", select.value));
  const search = el("input", { id: view + "-search", type: "search", placeholder: "search rows" });
  root.append(el("div", { class: "toolbar" }, select, search));
  if (!t) return root.append(el("p", {}, "No trace could be read."));
  const extra = group === "shape" ? [{ key: "input_shape", label: "input shape" }] : group === "stack" ? [{ key: "call_stack", label: "call stack" }] : group === "module" ? [{ key: "module", label: "module" }] : [];
  // Columns of another grouping (a kernel's operator) are absent from these rows.
  const allCols = cols.slice(0, 1).concat(extra, cols.slice(1)).filter((c) => !t.rows.length || t.rows.some((r) => c.key in r));
  const table = K.table(allCols, t.rows, {
    cls: view,
    onRow: (r) => ctx.jumpToName(r.name),
    rowTitle: "click: show in the timeline",
  });
  search.addEventListener("input", () => table.setFilter(search.value));
  root.append(
    K.stats([
      ["rows", t.rows.length + " of " + t.total_rows, "rows"],
      ["grouping", doc.group_by],
      ["sorted by", doc.sort],
    ]),
    section("Top " + Math.min(10, t.rows.length) + " by " + barLabel, K.bars(t.rows.slice(0, 10), (r) => r.name, (r) => r[barKey], K.fmtNs)),
    section("Rows", table),
    notes(t.warnings),
  );
};

K.pages.ops = tablePage(
  "ops",
  OP_GROUPS,
  [
    { key: "name", label: "operator" },
    { key: "calls", label: "calls", num: true, fmt: K.fmtNum },
    { key: "device_self_ns", label: "device self", num: true, fmt: K.fmtNs },
    { key: "device_total_ns", label: "device total", num: true, fmt: K.fmtNs },
    { key: "host_self_ns", label: "host self", num: true, fmt: K.fmtNs },
    { key: "host_total_ns", label: "host total", num: true, fmt: K.fmtNs },
    { key: "tc_total_share", label: "tensor cores", num: true, fmt: K.fmtShare },
  ],
  "device_self_ns",
  "device self time",
);

K.pages.kernels = tablePage(
  "kernels",
  KERNEL_GROUPS,
  [
    { key: "name", label: "kernel" },
    { key: "operator", label: "operator" },
    { key: "grid", label: "grid" },
    { key: "block", label: "block" },
    { key: "registers_per_thread", label: "registers", num: true, fmt: K.fmtNum },
    { key: "shared_memory_bytes", label: "shared memory", num: true, fmt: K.fmtBytes },
    { key: "calls", label: "calls", num: true, fmt: K.fmtNum },
    { key: "total_ns", label: "total", num: true, fmt: K.fmtNs },
    { key: "mean_ns", label: "mean", num: true, fmt: K.fmtNs },
    { key: "min_ns", label: "min", num: true, fmt: K.fmtNs },
    { key: "max_ns", label: "max", num: true, fmt: K.fmtNs },
    { key: "tensor_cores", label: "tensor cores" },
    { key: "mean_blocks_per_sm", label: "blocks/SM", num: true, fmt: K.fmtNum },
    { key: "mean_est_achieved_occupancy", label: "est. occupancy", num: true, fmt: K.fmtShare },
  ],
  "total_ns",
  "total time",
);

// ---- NVTX ranges --------------------------------------------------------------------

/** NVTX ranges by name (Nsight Systems exports), or `record_function` ranges (Kineto). */
K.pages.nvtx = async (root, ctx) => {
  const doc = await K.api(ctx.view("nvtx", "top=100"));
  const t = K.pick(doc, ctx);
  const search = el("input", { id: "nvtx-search", type: "search", placeholder: "search rows" });
  root.append(el("div", { class: "toolbar" }, search));
  if (!t) return root.append(el("p", {}, "No trace could be read."));
  if (!t.ranges.length) return root.append(el("p", {}, "No ranges in this trace."), notes(t.warnings));
  const rows = t.ranges.map((r) => ({ ...r, operator: r.operator ? "yes" : "" }));
  const table = K.table(
    [
      { key: "name", label: "range" },
      { key: "operator", label: "operator" },
      { key: "count", label: "count", num: true, fmt: K.fmtNum },
      { key: "total_ns", label: "total", num: true, fmt: K.fmtNs },
      { key: "share", label: "share", num: true, fmt: K.fmtShare },
      { key: "avg_ns", label: "mean", num: true, fmt: K.fmtNs },
      { key: "median_ns", label: "median", num: true, fmt: K.fmtNs },
      { key: "max_ns", label: "max", num: true, fmt: K.fmtNs },
      { key: "gpu_time_ns", label: "GPU time", num: true, fmt: K.fmtNs },
      { key: "gpu_span_ns", label: "GPU span", num: true, fmt: K.fmtNs },
    ],
    rows,
    { cls: "nvtx", onRow: (r) => ctx.jumpToName(r.name), rowTitle: "click: show in the timeline" },
  );
  search.addEventListener("input", () => table.setFilter(search.value));
  root.append(
    K.stats([
      ["ranges", String(t.ranges.length), "ranges"],
      ["source", t.nsys ? "Nsight Systems NVTX" : "record_function ranges"],
    ]),
    section("Top " + Math.min(10, rows.length) + " by total time", K.bars(rows.slice(0, 10), (r) => r.name, (r) => r.total_ns, K.fmtNs)),
    section("Ranges", table),
    notes(t.warnings),
  );
};

// ---- Memory ------------------------------------------------------------------------

/** A cell formatter by the JSON key's unit suffix (`_bytes`, `_ns`, `share`). */
K.fmtByKey = (key) => (key.endsWith("bytes") || key.startsWith("bytes_") ? K.fmtBytes : key.endsWith("_ns") ? K.fmtNs : key.includes("share") ? K.fmtShare : K.fmtAny);

/** An allocation row with its epoch times as times since the trace's start. */
K.sinceStart = (a, origin) => ({
  op: a.op,
  parent_op: a.parent_op,
  release_op: a.release_op,
  bytes: a.bytes,
  alloc_since_start_ns: a.alloc_ns === null ? null : a.alloc_ns - origin,
  release_since_start_ns: a.release_ns === null ? null : a.release_ns - origin,
  lifetime_ns: a.lifetime_ns,
});

/** A table of any rows, one column per key of the first row, units from key names. */
K.genericTable = (rows, cls) => {
  const keys = rows.length ? Object.keys(rows[0]) : [];
  return K.table(
    keys.map((k) => ({ key: k, label: k.replace(/_(ns|bytes)$/, "").replace(/_/g, " "), num: typeof rows[0][k] === "number", fmt: K.fmtByKey(k) })),
    rows,
    { cls },
  );
};

K.pages.memory = async (root, ctx) => {
  const doc = await K.api(ctx.view("memory", "top=100"));
  if (doc.kind === "memory_snapshot") return K.snapshotMemory(root, doc.snapshot);
  if (doc.kind === "memory_timeline") return root.append(section("Memory timeline", K.genericTable([doc.timeline || {}], "timeline")));
  const t = K.pick(doc, ctx);
  if (!t) return root.append(el("p", {}, "No trace could be read."));
  root.append(K.stats([["records", K.fmtNum(t.records), "records"], ["out of memory events", K.fmtNum(t.out_of_memory_events)]]), notes(t.notes));
  t.devices.forEach((d, i) => K.deviceMemory(root, t, d, i));
};

/** One device of a trace's memory view. */
K.deviceMemory = (root, t, d, i) => {
  const peak = d.peak_allocated;
  const host = el("div", { class: "chart", id: "memory-chart-" + i });
  root.append(
    section(
      d.device,
      el("p", { class: "peak", "data-key": "peak" }, peak ? "Peak allocated " + K.fmtBytes(peak.bytes) + " in " + (peak.op || "(no operator)") : "No allocated peak recorded."),
      K.stats([
        ["peak allocated", peak ? K.fmtBytes(peak.bytes) : "–", "peak_allocated"],
        ["peak reserved", d.peak_reserved ? K.fmtBytes(d.peak_reserved.bytes) : "–", "peak_reserved"],
        ["capacity", K.fmtBytes(d.capacity_bytes)],
        ["records", K.fmtNum(d.records)],
      ]),
      host,
    ),
  );
  const pts = d.curve.points;
  if (pts.length) {
    const series = [{ label: "allocated", color: "#4e79a7", values: pts.map((p) => p.allocated_bytes) }];
    if (pts.some((p) => p.reserved_bytes !== null)) series.push({ label: "reserved", color: "#f28e2b", values: pts.map((p) => p.reserved_bytes) });
    const ms = (ns) => (ns - t.origin_ns) / 1e6;
    K.memoryChart(host, pts.map((p) => ms(p.ts_ns)), "ms since the trace's start", series, peak ? { x: ms(peak.ts_ns), bytes: peak.bytes } : null);
  }
  if (d.categories && d.categories.series.peak) {
    const p = d.categories.series.peak;
    const rows = d.categories.series.categories.map((c, k) => ({ category: c, bytes_at_peak: p.by_category[k], share_at_peak: p.share_by_category[k], max_bytes: d.categories.series.max_by_category[k] }));
    root.append(section(d.device + ": categories at the peak", K.genericTable(rows, "categories"), el("p", { class: "details" }, d.categories.method)));
  }
  const m = d.modules_at_peak;
  if (m && m.rows.length) {
    const rows = m.rows.map((r) => ({ module: r.module === null ? "(outside any nn.Module)" : r.module, bytes: r.bytes, allocations: r.allocations, share_of_peak: r.share_of_peak }));
    const before = m.peak_bytes - m.traced_bytes;
    const note = before > 0 ? K.fmtBytes(before) + " of the peak was allocated before profiling started." : "Every byte live at the peak was allocated while profiling.";
    root.append(section(d.device + ": memory by nn.Module at the peak (" + K.fmtBytes(m.peak_bytes) + ")", K.genericTable(rows, "modules"), el("p", { class: "details" }, note)));
  }
  root.append(
    section(d.device + ": allocations (" + d.allocations.rows.length + " of " + d.allocations.total_rows + ")", K.genericTable(d.allocations.rows.map((a) => K.sinceStart(a, t.origin_ns)), "allocations")),
    section(d.device + ": operators (" + d.operators.length + " of " + d.operators_total + ")", K.genericTable(d.operators, "mem-operators")),
  );
};

/** A CUDA snapshot: state, segments, fragmentation, top stacks at the peak, history. */
K.snapshotMemory = (root, s) => {
  root.append(notes(s.notes));
  s.devices.forEach((d, i) => {
    const st = d.state;
    const host = el("div", { class: "chart", id: "snapshot-chart-" + i });
    root.append(
      section(
        d.device + " (CUDA memory snapshot)",
        K.stats([
          ["reserved", K.fmtBytes(st.reserved_bytes), "reserved"],
          ["allocated", K.fmtBytes(st.allocated_bytes), "allocated"],
          ["largest free block", K.fmtBytes(st.largest_free_block_bytes)],
          ["fragmentation", K.fmtShare(st.fragmentation), "fragmentation"],
          ["peak active", d.history ? K.fmtBytes(d.history.peak_active_bytes) : "–", "peak_active"],
        ]),
        host,
      ),
    );
    if (d.timeline.length) {
      const series = [
        { label: "active", color: "#4e79a7", values: d.timeline.map((p) => p.active_bytes) },
        { label: "reserved", color: "#f28e2b", values: d.timeline.map((p) => p.reserved_bytes) },
      ];
      const peak = d.history ? { x: d.history.peak_index, bytes: d.history.peak_active_bytes } : null;
      K.memoryChart(host, d.timeline.map((p) => p.index), "history entry", series, peak);
    }
    const sites = d.top_sites.sites.map((x) => ({ site: x.user_frame ?? x.op_site, bytes: x.bytes, count: x.count, frames: x.frames.join(" ← ") }));
    root.append(
      section("Top stacks at the " + d.top_sites.at + " (" + K.fmtBytes(d.top_sites.bytes) + " live)", K.genericTable(sites, "sites")),
      section("Segments (" + d.segments.length + " of " + d.segments_total + ")", K.genericTable(d.segments, "segments")),
    );
    if (d.leak_suspects.length) root.append(section("Never freed", K.genericTable(d.leak_suspects.map((x) => ({ site: x.user_frame ?? x.op_site, count: x.count, bytes: x.bytes, growing: x.growing })), "leaks")));
  });
};

// ---- Distributed -------------------------------------------------------------------

K.pages.distributed = async (root, ctx) => {
  const [ranks, comm] = await Promise.allSettled([K.api(ctx.view("ranks")), K.api(ctx.view("comm"))]);
  if (ranks.status === "fulfilled") K.ranksSections(root, ranks.value.report);
  else root.append(section("Ranks", el("p", { class: "unavailable" }, ranks.reason.message)));
  if (comm.status === "rejected") return root.append(section("Communication", el("p", { class: "unavailable" }, comm.reason.message)));
  const t = K.pick(comm.value, ctx);
  if (!t) return;
  const o = t.overlap;
  root.append(
    section(
      "Communication (" + t.path + ")",
      K.stats([
        ["communication", K.fmtNs(o.communication_ns), "communication"],
        ["computation", K.fmtNs(o.computation_ns)],
        ["overlap", K.fmtShare(o.overlap_share), "overlap_share"],
        ["exposed communication", K.fmtNs(o.exposed_communication_ns)],
      ]),
      K.table(
        [
          { key: "collective", label: "collective" },
          { key: "process_group", label: "group" },
          { key: "count", label: "calls", num: true, fmt: K.fmtNum },
          { key: "bytes", label: "bytes", num: true, fmt: K.fmtBytes },
          { key: "latency_ns", label: "latency", num: true, fmt: K.fmtNs },
          { key: "mean_latency_ns", label: "mean", num: true, fmt: K.fmtNs },
          { key: "algbw_gbps", label: "algbw GB/s", num: true, fmt: K.fmtNum },
          { key: "busbw_gbps", label: "busbw GB/s", num: true, fmt: K.fmtNum },
        ],
        t.collectives,
        { cls: "collectives" },
      ),
    ),
    notes(t.warnings),
  );
};

/** The rank comparison: per-rank breakdown, stragglers, clock skew, collectives. */
K.ranksSections = (root, r) => {
  const host = el("div", { class: "chart", id: "ranks-chart" });
  root.append(section("Per-rank breakdown (mean per step)", host));
  const values = {};
  for (const p of PARTS) values[p] = r.ranks.map((x) => x.mean_parts_ns[p]);
  K.stackedBars(host, r.ranks.map((x) => "rank " + x.rank), PARTS, values, K.fmtNs);
  root.append(
    section(
      "Ranks",
      K.table(
        [
          { key: "rank", label: "rank", num: true },
          { key: "steps", label: "steps", num: true },
          { key: "mean_step_ns", label: "mean step", num: true, fmt: K.fmtNs },
          { key: "outside_collectives_ns", label: "outside collectives", num: true, fmt: K.fmtNs },
          { key: "total_wait_ns", label: "waited", num: true, fmt: K.fmtNs },
          { key: "arrived_last_share", label: "arrived last", num: true, fmt: K.fmtShare },
          { key: "clock_offset_ns", label: "clock offset", num: true, fmt: K.fmtNs },
        ],
        r.ranks,
        { cls: "ranks" },
      ),
    ),
    section(
      "Stragglers (by " + r.straggler_basis.replace(/_/g, " ") + ")",
      r.stragglers.length
        ? K.table(
            [
              { key: "rank", label: "rank", num: true },
              { key: "caused_wait_per_step_ns", label: "others wait per step", num: true, fmt: K.fmtNs },
              { key: "arrived_last_share", label: "arrived last", num: true, fmt: K.fmtShare },
              { key: "outside_excess_ns", label: "excess outside collectives", num: true, fmt: K.fmtNs },
              { key: "slower_phase", label: "slower phase" },
            ],
            r.stragglers,
            { cls: "stragglers" },
          )
        : el("p", {}, "No straggler."),
    ),
    section(
      "Clock skew",
      K.stats([
        ["clock mode", r.clock.mode],
        ["matched collectives", K.fmtNum(r.skew.matched), "matched"],
        ["median skew", K.fmtNs(r.skew.median_skew_ns), "median_skew"],
        ["max skew", K.fmtNs(r.skew.max_skew_ns), "max_skew"],
      ]),
      K.genericTable(r.collectives.map((c) => ({ collective: c.collective, process_group: c.process_group, start_skew_ns: c.start_skew_ns, last_rank: c.last_rank, step: c.step })), "skew"),
    ),
    notes(r.warnings),
  );
};

// ---- Diff --------------------------------------------------------------------------

K.pages.diff = async (root, ctx) => {
  const runs = ctx.runs;
  const pick = (id, label, chosen) => el("select", { id, "aria-label": label }, runs.map((r) => el("option", { value: r.id, selected: r.id === chosen }, r.name)));
  const base = pick("diff-base", "base run", ctx.option("diff.base") || (runs[0] || {}).id);
  const nu = pick("diff-new", "new run", ctx.option("diff.new") || (runs[1] || runs[0] || {}).id);
  const go = el("button", { id: "diff-go" }, "Compare");
  go.addEventListener("click", () => ctx.setOptions({ "diff.base": base.value, "diff.new": nu.value, "diff.go": "1" }));
  root.append(el("div", { class: "toolbar" }, "base ", base, " new ", nu, go));
  if (!ctx.option("diff.go")) return root.append(el("p", {}, runs.length < 2 ? "Diff compares two runs; this page has one." : "Pick two runs."));
  const d = await K.api("/api/v1/diff?base=" + encodeURIComponent(base.value) + "&new=" + encodeURIComponent(nu.value));
  const s = d.steps;
  root.append(
    section(
      "Step time",
      K.stats([
        ["verdict", s.verdict, "verdict"],
        ["median change", K.fmtNs(s.delta_median_ns), "delta_median"],
        ["95 % interval", K.fmtNs(s.ci_low_ns) + " … " + K.fmtNs(s.ci_high_ns)],
        ["relative", K.fmtShare(s.relative), "relative"],
        ["machine", d.machine.verdict],
      ]),
    ),
    section("Breakdown", K.genericTable(d.breakdown, "diff-breakdown")),
    section("Operators", K.genericTable(d.ops.slice(0, 50).map((o) => ({ key: o.key, status: o.status, base_ns: o.base_ns, new_ns: o.new_ns, delta_ns: o.delta_ns })), "diff-ops")),
    section("Kernels", K.genericTable(d.kernels.slice(0, 50).map((o) => ({ key: o.key, status: o.status, base_ns: o.base_ns, new_ns: o.new_ns, delta_ns: o.delta_ns })), "diff-kernels")),
    section("Findings", K.genericTable(d.findings.changed, "diff-findings"), el("p", {}, d.findings.new.length + " new, " + d.findings.resolved.length + " resolved")),
  );
};
