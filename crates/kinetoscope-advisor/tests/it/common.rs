//! The one helper module of the advisor's tests: where test data lives, a builder for
//! small inline Kineto traces (steps, operators, kernels launched from them, copies,
//! `[memory]` records), lookups over findings, and the plain-text rendering of findings
//! that the rule table snapshots.

use std::path::{Path, PathBuf};

use kinetoscope_advisor::{
    advise_ranks, advise_trace, Config, Finding, RankMemory, Severity, TraceReport,
};
use kinetoscope_analysis::ranks::{compare_ranks, RankSummary, RanksOptions};
use kinetoscope_trace::read::{read_trace, read_trace_bytes, ReadOptions};
use kinetoscope_trace::Trace;

/// One GiB, bytes.
pub const GIB: u64 = 1 << 30;

/// Start of the first step built by [`TraceBuilder::steps`], µs.
pub const T0: u64 = 1_000_000;

/// An H100 SXM5 `deviceProperties` entry (compute capability 9.0, 132 SMs, 80 GiB) with
/// device id `id`.
pub fn h100(id: u32) -> String {
    format!(
        r#"{{"id":{id},"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":{},"computeMajor":9,"computeMinor":0,"numSms":132,"maxThreadsPerMultiProcessor":2048}}"#,
        80 * GIB
    )
}

/// `corpus/traces/<rel>`: the traces with planted problems (corpus/README.md).
pub fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/traces")
        .join(rel)
}

/// The reader's fixtures (`crates/kinetoscope-trace/tests/fixtures`).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kinetoscope-trace/tests/fixtures")
}

/// The shared reference folder: `$KINETOSCOPE_SHARED`, else `../shared` beside the
/// repository (`CARGO_MANIFEST_DIR/../../../shared`), as the analysis tests locate it.
/// Panics with a clear message when it is missing: a test that needs it is `#[ignore]`d
/// and must fail, not pass silently, when someone runs it without the data.
pub fn shared_dir() -> PathBuf {
    let candidate = std::env::var_os("KINETOSCOPE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    assert!(
        candidate.is_dir(),
        "this test needs the shared reference folder, which is missing: looked for {} \
         (set KINETOSCOPE_SHARED to its path, or check out `shared/` beside the repository)",
        candidate.display()
    );
    candidate
}

/// Read a trace file (plain or gzip).
pub fn read_file(path: &Path) -> Trace {
    read_trace(path, &ReadOptions::default())
        .unwrap_or_else(|e| panic!("{} reads: {e}", path.display()))
}

/// The cross-rank findings for the rank traces of one job: each trace's report and the
/// rank comparison of the traces (what the engine gives [`advise_ranks`]).
pub fn advise_rank_traces(traces: &[Trace], config: &Config, input: &str) -> Vec<Finding> {
    let reports: Vec<TraceReport> = traces.iter().map(|t| advise_trace(t, config)).collect();
    let ranks = compare_ranks(
        traces.iter().map(RankSummary::from_trace).collect(),
        RanksOptions::default(),
    );
    advise_ranks(&RankMemory::of_reports(&reports), &ranks, config, input)
}

/// Read a trace file and run the advisor on it.
pub fn report_file(path: &Path, config: &Config) -> TraceReport {
    advise_trace(&read_file(path), config)
}

/// The first finding with code `id`.
pub fn find<'a>(findings: &'a [Finding], id: &str) -> Option<&'a Finding> {
    findings.iter().find(|f| f.id == id)
}

/// The first finding with code `id`; panics listing the findings when there is none.
pub fn expect_finding<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
    find(findings, id).unwrap_or_else(|| panic!("{id} missing: {:?}", ids(findings)))
}

/// Position (0-based) of the first finding with code `id`.
pub fn position(findings: &[Finding], id: &str) -> Option<usize> {
    findings.iter().position(|f| f.id == id)
}

/// Code, severity and impact of each finding, for assertion messages.
pub fn ids(findings: &[Finding]) -> Vec<(&str, Severity, f64)> {
    findings
        .iter()
        .map(|f| (f.id.as_str(), f.severity, f.impact_ns_per_step / 1e6))
        .collect()
}

/// A sweep's check of one report (`label` names the trace): without steps there is no
/// finding; every impact lies within the mean step and its percentage within 0–100; MFU,
/// when known, lies within 0–1.
pub fn assert_findings_fit(r: &TraceReport, label: &str) {
    let Some(stats) = r.summary.step_stats.as_ref() else {
        assert!(r.findings.is_empty(), "{label}: {:?}", ids(&r.findings));
        return;
    };
    let step_ms = stats.mean_ns / 1e6;
    for x in &r.findings {
        assert!(
            x.impact_ns_per_step >= 0.0 && x.impact_ns_per_step / 1e6 <= step_ms * 1.0001,
            "{label}: {} {} > {step_ms}",
            x.id,
            x.impact_ns_per_step / 1e6
        );
        assert!((0.0..=1.0).contains(&x.impact_share), "{label}: {x:?}");
    }
    if let Some(m) = r.flops.mfu {
        assert!((0.0..=1.0).contains(&m), "{label}: MFU {m}");
    }
}

/// Whether two floats agree to 1e-6.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

/// Findings as stable, human-readable text: code, rule, severity, title, impact,
/// confidence, evidence, fix and details, one block per finding.
pub fn render(findings: &[&Finding]) -> String {
    let mut out = String::new();
    for (i, f) in findings.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let c = &f.confidence;
        out.push_str(&format!("{} {} [{}]\n", f.id, f.rule, f.severity.as_str()));
        out.push_str(&format!("subject: {}\n", f.subject));
        out.push_str(&format!("title: {}\n", f.title));
        out.push_str(&format!(
            "impact: {:.3} ms per step ({:.1} % of the step)\n",
            f.impact_ns_per_step / 1e6,
            f.impact_share * 100.0
        ));
        out.push_str(&format!(
            "confidence: {} of {} steps, {} of {} ranks{}\n",
            c.steps,
            c.of_steps,
            c.ranks,
            c.of_ranks,
            f.rank.map(|r| format!("; rank {r}")).unwrap_or_default()
        ));
        out.push_str("evidence:\n");
        for e in &f.evidence {
            out.push_str(&format!("  - {e}\n"));
        }
        out.push_str(&format!("fix: {}\n", f.fix));
        out.push_str(&format!("details: {}\n", f.details.trim()));
    }
    out
}

/// A Kineto trace under construction; times in µs. Host events run on pid 100, tid 100;
/// GPU events on pid [`Self::device`], tid [`Self::stream`].
pub struct TraceBuilder {
    events: Vec<String>,
    next_id: u64,
    /// Extra top-level keys (`"distributedInfo":{...}`), comma-joined into the object.
    pub top: Vec<String>,
    /// `deviceProperties` entries (see [`h100`]); none for a CPU-only trace.
    pub devices: Vec<String>,
    /// Device of the kernels and copies added next.
    pub device: u32,
    /// Stream of the kernels and copies added next.
    pub stream: u32,
    /// Duration of each launch call added next (µs).
    pub launch_us: u64,
}

impl Default for TraceBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl TraceBuilder {
    /// An empty trace without devices; kernels go to device 0, stream 7.
    pub fn new() -> Self {
        Self {
            events: Vec::new(),
            next_id: 1,
            top: Vec::new(),
            devices: Vec::new(),
            device: 0,
            stream: 7,
            launch_us: 2,
        }
    }

    /// An empty trace on one H100 (device 0).
    pub fn h100() -> Self {
        let mut b = Self::new();
        b.devices.push(h100(0));
        b
    }

    /// A fresh id (External id, correlation, address).
    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Any event, as its JSON object.
    pub fn raw(&mut self, event: String) {
        self.events.push(event);
    }

    /// A `ProfilerStep#n` annotation.
    pub fn step(&mut self, n: u64, ts: u64, dur: u64) {
        self.annotation(&format!("ProfilerStep#{n}"), ts, dur);
    }

    /// `count` back-to-back steps of `step_us` from [`T0`]; `each(builder, n, start)`
    /// fills step `n`.
    pub fn steps(&mut self, count: u64, step_us: u64, mut each: impl FnMut(&mut Self, u64, u64)) {
        for n in 0..count {
            let t = T0 + n * step_us;
            self.step(n, t, step_us);
            each(self, n, t);
        }
    }

    /// Steps of the given durations, back to back from [`T0`]; `each(builder, n, start)`
    /// fills step `n`.
    pub fn steps_of(&mut self, durs: &[u64], mut each: impl FnMut(&mut Self, u64, u64)) {
        let mut t = T0;
        for (n, &d) in durs.iter().enumerate() {
            self.step(n as u64, t, d);
            each(self, n as u64, t);
            t += d;
        }
    }

    /// A `user_annotation` span on the host thread (`record_function`, DataLoader,
    /// optimizer step).
    pub fn annotation(&mut self, name: &str, ts: u64, dur: u64) {
        self.events.push(format!(
            r#"{{"ph":"X","cat":"user_annotation","name":"{name}","pid":100,"tid":100,"ts":{ts},"dur":{dur}}}"#
        ));
    }

    /// A `python_function` frame on the host thread (`with_stack=True`).
    pub fn python(&mut self, name: &str, ts: u64, dur: u64) {
        self.events.push(format!(
            r#"{{"ph":"X","cat":"python_function","name":"{name}","pid":100,"tid":100,"ts":{ts},"dur":{dur}}}"#
        ));
    }

    /// A `cpu_op` with extra args (a JSON object body without braces, may be empty);
    /// returns its External id.
    pub fn op(&mut self, name: &str, ts: u64, dur: u64, args: &str) -> u64 {
        let ext = self.id();
        let sep = if args.is_empty() { "" } else { "," };
        self.events.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":100,"tid":100,"ts":{ts},"dur":{dur},"args":{{"External id":{ext}{sep}{args}}}}}"#
        ));
        ext
    }

    /// A BF16 4096³ `aten::mm` at `ts` (40 µs of host time) whose tensor-core kernel
    /// runs `[k_ts, k_ts + dur)`.
    pub fn gemm(&mut self, ts: u64, k_ts: u64, dur: u64) {
        let ext = self.op(
            "aten::mm",
            ts,
            40,
            r#""Input Dims":[[4096,4096],[4096,4096]],"Input type":["c10::BFloat16","c10::BFloat16"]"#,
        );
        self.kernel(
            ext,
            ts + 10,
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
            k_ts,
            dur,
            "",
        );
    }

    /// A `cuda_runtime` call that launches nothing (`cudaMalloc`,
    /// `cudaStreamSynchronize`).
    pub fn runtime(&mut self, name: &str, ts: u64, dur: u64) {
        self.events.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"{name}","pid":100,"tid":100,"ts":{ts},"dur":{dur}}}"#
        ));
    }

    /// A runtime call `api` at `launch_ts` (inside the operator with External id `ext`)
    /// and the GPU event it launched, linked by correlation; returns the correlation.
    fn launch(&mut self, api: &str, ext: u64, launch_ts: u64) -> u64 {
        let corr = 10_000 + self.id();
        let dur = self.launch_us;
        self.events.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"{api}","pid":100,"tid":100,"ts":{launch_ts},"dur":{dur},"args":{{"External id":{ext},"correlation":{corr}}}}}"#
        ));
        corr
    }

    /// A kernel launched at `launch_ts` (inside the operator with External id `ext`),
    /// running `[k_ts, k_ts + k_dur)` on [`Self::device`] / [`Self::stream`], with
    /// extra kernel args.
    pub fn kernel(
        &mut self,
        ext: u64,
        launch_ts: u64,
        name: &str,
        k_ts: u64,
        k_dur: u64,
        args: &str,
    ) {
        let corr = self.launch("cudaLaunchKernel", ext, launch_ts);
        let (dev, stream) = (self.device, self.stream);
        let sep = if args.is_empty() { "" } else { "," };
        self.events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":{dev},"tid":{stream},"ts":{k_ts},"dur":{k_dur},"args":{{"External id":{ext},"correlation":{corr},"device":{dev},"stream":{stream}{sep}{args}}}}}"#
        ));
    }

    /// A kernel launch call `api` at `launch_ts` (inside the operator with External id
    /// `ext`) whose GPU activity the trace does not hold, as when the profiler lost the
    /// device activity.
    pub fn lost_launch(&mut self, api: &str, ext: u64, launch_ts: u64) {
        self.launch(api, ext, launch_ts);
    }

    /// A `cudaGraphLaunch` at `launch_ts` (inside the operator with External id `ext`)
    /// replaying `kernels` (name, start, duration) on [`Self::device`] /
    /// [`Self::stream`], all with the launch's correlation.
    pub fn graph_launch(&mut self, ext: u64, launch_ts: u64, kernels: &[(&str, u64, u64)]) {
        let corr = self.launch("cudaGraphLaunch", ext, launch_ts);
        let (dev, stream) = (self.device, self.stream);
        for (name, ts, dur) in kernels {
            self.events.push(format!(
                r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":{dev},"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"correlation":{corr},"device":{dev},"stream":{stream}}}}}"#
            ));
        }
    }

    /// A `cudaMemcpyAsync` at `launch_ts` (inside the operator with External id `ext`)
    /// and its `gpu_memcpy` `name` (`Memcpy HtoD (Pinned -> Device)`) of `bytes`,
    /// running `[ts, ts + dur)`.
    pub fn memcpy(&mut self, ext: u64, launch_ts: u64, name: &str, ts: u64, dur: u64, bytes: u64) {
        let corr = self.launch("cudaMemcpyAsync", ext, launch_ts);
        let (dev, stream) = (self.device, self.stream);
        self.events.push(format!(
            r#"{{"ph":"X","cat":"gpu_memcpy","name":"{name}","pid":{dev},"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"External id":{ext},"correlation":{corr},"device":{dev},"stream":{stream},"bytes":{bytes}}}}}"#
        ));
    }

    /// A memset named `name` (`Memset (Pinned)`) launched by the runtime call `call` at
    /// `launch_ts` under `ext`.
    pub fn memset(&mut self, call: &str, ext: u64, launch_ts: u64, name: &str, ts: u64, dur: u64) {
        let corr = self.launch(call, ext, launch_ts);
        let (dev, stream) = (self.device, self.stream);
        self.events.push(format!(
            r#"{{"ph":"X","cat":"gpu_memset","name":"{name}","pid":{dev},"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"External id":{ext},"correlation":{corr},"device":{dev},"stream":{stream},"bytes":4096}}}}"#
        ));
    }

    /// A `[memory]` record of `bytes` (negative: a free) at `addr` on GPU 0, with the
    /// totals after it.
    pub fn memory_event(&mut self, ts: u64, addr: u64, bytes: i64, allocated: u64, reserved: u64) {
        self.events.push(format!(
            r#"{{"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":100,"tid":100,"ts":{ts},"args":{{"Device Type":1,"Device Id":0,"Addr":{addr},"Bytes":{bytes},"Total Allocated":{allocated},"Total Reserved":{reserved}}}}}"#
        ));
    }

    /// A 1 KiB allocation record on GPU 0 at a fresh address, with the totals after it.
    pub fn memory(&mut self, ts: u64, allocated: u64, reserved: u64) {
        let addr = 4096 + self.id();
        self.memory_event(ts, addr, 1024, allocated, reserved);
    }

    /// The trace's JSON.
    pub fn json(&self) -> String {
        let mut top = String::new();
        for t in &self.top {
            top.push_str(t);
            top.push(',');
        }
        format!(
            r#"{{"schemaVersion":1,{top}"deviceProperties":[{}],"traceEvents":[{}]}}"#,
            self.devices.join(","),
            self.events.join(",\n")
        )
    }

    /// Read the trace with the in-memory reader.
    pub fn trace(&self) -> Trace {
        let text = self.json();
        read_trace_bytes(
            Path::new("inline.json"),
            text.as_bytes(),
            &ReadOptions::default(),
        )
        .expect("inline trace reads")
    }

    /// Read the trace and run the advisor.
    pub fn report(&self, config: &Config) -> TraceReport {
        advise_trace(&self.trace(), config)
    }
}
