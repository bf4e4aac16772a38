//! `kinetoscope report PATH --html OUT`: the offline page in Chromium, page by page,
//! against the documents the CLI prints for the same views.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{assert_shows, browser, open_page, screenshot_dir, texts, Browser};
use crate::common::{corpus, json, kinetoscope};

/// The repository root (the CLI's relative input paths are from here).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A GPU trace with kernels, operators and three steps (TraceLens, see its SOURCE.md).
const GPU_TRACE: &str =
    "crates/kinetoscope-analysis/tests/fixtures/gpu_traces/linear_kineto_3steps.json.gz";
/// A GPU trace with `[memory]` events (TraceLens).
const MEMORY_TRACE: &str =
    "crates/kinetoscope-analysis/tests/fixtures/gpu_traces/mi300x_qwen_gpu_and_memory.json.gz";

/// Write the offline page of `input` and return its `file://` URL.
fn offline_page(input: &str, name: &str) -> String {
    let out = screenshot_dir().join(name);
    let run = kinetoscope(&root(), &["report", input, "--html", out.to_str().unwrap()]);
    assert!(run.code == Some(0) || run.code == Some(1), "{}", run.stderr);
    format!("file://{}", out.display())
}

/// The CLI's JSON for `args` (the API's answer for the same view and options).
fn doc(args: &[&str]) -> Value {
    json(&root(), args)
}

/// Numbers of the overview page against `overview` and `report`.
fn check_overview(b: &mut Browser, input: &str) {
    let ov = doc(&["overview", input, "--format", "json"]);
    let t = &ov["traces"][0];
    let shown = texts(b, "[data-key=mean_step]");
    assert_shows(
        &shown[0],
        t["average"]["dur_ns"].as_f64().unwrap(),
        "mean step",
    );
    assert_eq!(
        texts(b, "[data-key=steps]")[0],
        t["steps"].as_array().unwrap().len().to_string()
    );
    // The average breakdown table: one row per part, in the document's order.
    let parts = texts(b, "table.breakdown td[data-key=part]");
    let ns = texts(b, "table.breakdown td[data-key=ns]");
    let share = texts(b, "table.breakdown td[data-key=share]");
    assert_eq!(parts.len(), 8);
    for (i, p) in parts.iter().enumerate() {
        assert_shows(&ns[i], t["average"]["breakdown_ns"][p].as_f64().unwrap(), p);
        assert_shows(&share[i], t["average"]["share"][p].as_f64().unwrap(), p);
    }
    let report = doc(&["report", input, "--format", "json"]);
    let findings = report["findings"].as_array().unwrap();
    let c = &report["counts"];
    assert_eq!(
        texts(b, "[data-key=counts]")[0],
        format!(
            "{} critical, {} warning, {} info",
            c["critical"], c["warning"], c["info"]
        )
    );
    let titles = texts(b, "article.finding .title");
    let impacts = texts(b, "article.finding [data-key=impact]");
    assert_eq!(titles.len(), findings.len());
    for (i, f) in findings.iter().enumerate() {
        assert_eq!(titles[i], f["title"].as_str().unwrap());
        assert_shows(
            &impacts[i],
            f["impact_ns_per_step"].as_f64().unwrap(),
            "impact",
        );
    }
}

/// The rows of a table page against the view's document.
fn check_table(b: &mut Browser, table: &str, rows: &Value, cols: &[&str]) {
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty(), "{table}: the fixture has rows");
    let names = texts(b, &format!("table.{table} td[data-key=name]"));
    let expected: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, expected, "{table}: rows in the document's order");
    for col in cols {
        let shown = texts(b, &format!("table.{table} td[data-key={col}]"));
        for (i, r) in rows.iter().enumerate() {
            assert_shows(&shown[i], r[col].as_f64().unwrap(), col);
        }
    }
}

#[test]
fn gpu_trace_pages_show_the_documents_numbers() {
    let Some(mut b) = browser() else { return };
    let url = offline_page(GPU_TRACE, "offline-gpu.html");
    open_page(&mut b, &url, "overview", "offline-gpu-overview.png");
    check_overview(&mut b, GPU_TRACE);
    let gpus = doc(&["overview", GPU_TRACE, "--format", "json"])["traces"][0]["gpus"].clone();
    let util = texts(&mut b, "table.gpus td[data-key=utilization]");
    assert_shows(
        &util[0],
        gpus[0]["utilization"].as_f64().unwrap(),
        "utilization",
    );

    open_page(&mut b, &url, "ops", "offline-gpu-ops.png");
    let ops = doc(&["ops", GPU_TRACE, "--format", "json", "--top", "100"]);
    check_table(
        &mut b,
        "ops",
        &ops["traces"][0]["rows"],
        &["calls", "device_self_ns", "host_total_ns"],
    );
    // Another grouping re-queries the API and shows that document.
    b.eval("(() => { const s = document.getElementById('ops-group'); s.value = 'shape'; s.dispatchEvent(new Event('change')); })()");
    b.wait_for(
        "location.hash.includes('group_by=shape') && document.body.dataset.ready === 'yes'",
        20,
    );
    let shapes = doc(&[
        "ops",
        GPU_TRACE,
        "--format",
        "json",
        "--top",
        "100",
        "--group-by",
        "shape",
    ]);
    check_table(
        &mut b,
        "ops",
        &shapes["traces"][0]["rows"],
        &["calls", "device_self_ns"],
    );
    let shown = texts(&mut b, "table.ops td[data-key=input_shape]");
    assert_eq!(
        shown[0],
        shapes["traces"][0]["rows"][0]["input_shape"]
            .as_str()
            .unwrap()
    );
    // Search filters rows; the filter is on the shown text.
    let first = shapes["traces"][0]["rows"][0]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    b.eval(&format!(
        "(() => {{ const s = document.getElementById('ops-search'); s.value = {}; s.dispatchEvent(new Event('input')); }})()",
        serde_json::to_string(&first).unwrap()
    ));
    let names = texts(&mut b, "table.ops td[data-key=name]");
    assert!(
        !names.is_empty()
            && names
                .iter()
                .all(|n| n.to_lowercase().contains(&first.to_lowercase()))
    );

    open_page(&mut b, &url, "kernels", "offline-gpu-kernels.png");
    let kernels = doc(&["kernels", GPU_TRACE, "--format", "json", "--top", "100"]);
    check_table(
        &mut b,
        "kernels",
        &kernels["traces"][0]["rows"],
        &["calls", "total_ns", "max_ns"],
    );

    for page in ["memory", "distributed", "diff", "trace"] {
        open_page(&mut b, &url, page, &format!("offline-gpu-{page}.png"));
    }
    // One trace: the rank comparison does not apply, and the page says why.
    open_page(&mut b, &url, "distributed", "offline-gpu-distributed.png");
    assert!(texts(&mut b, ".unavailable")[0].contains("at least two rank trace files"));
}

#[test]
fn memory_page_shows_peaks_per_device() {
    let Some(mut b) = browser() else { return };
    let url = offline_page(MEMORY_TRACE, "offline-memory.html");
    open_page(&mut b, &url, "memory", "offline-memory.png");
    let mem = doc(&["memory", MEMORY_TRACE, "--format", "json", "--top", "100"]);
    let devices = mem["traces"][0]["devices"].as_array().unwrap();
    let peaks = texts(&mut b, "[data-key=peak_allocated]");
    assert_eq!(peaks.len(), devices.len());
    for (i, d) in devices.iter().enumerate() {
        assert_shows(
            &peaks[i],
            d["peak_allocated"]["bytes"].as_f64().unwrap(),
            "peak",
        );
    }
    // A chart per device with points.
    let canvases = b.eval("document.querySelectorAll('.chart canvas').length");
    assert!(canvases.as_u64().unwrap() >= devices.len() as u64);
}

/// A real CPU trace recorded with `with_stack` and `profile_memory` (the corpus run
/// folder's training phase): its memory by `nn.Module` at the peak.
const MODULES_TRACE: &str =
    "corpus/traces/run_folder/20261124_215816/stage3-training_microsteps_trace.json.gz";

#[test]
fn memory_page_shows_the_modules_at_the_peak() {
    let Some(mut b) = browser() else { return };
    let url = offline_page(MODULES_TRACE, "offline-modules.html");
    open_page(&mut b, &url, "memory", "offline-modules.png");
    let mem = doc(&["memory", MODULES_TRACE, "--format", "json"]);
    let rows = mem["traces"][0]["devices"][0]["modules_at_peak"]["rows"]
        .as_array()
        .unwrap()
        .clone();
    assert!(rows.len() >= 3);
    let names = texts(&mut b, "table.modules td[data-key=module]");
    let expected: Vec<String> = rows
        .iter()
        .map(|r| {
            r["module"]
                .as_str()
                .unwrap_or("(outside any nn.Module)")
                .to_owned()
        })
        .collect();
    assert_eq!(names, expected);
    let bytes = texts(&mut b, "table.modules td[data-key=bytes]");
    for (shown, r) in bytes.iter().zip(&rows) {
        assert_shows(shown, r["bytes"].as_f64().unwrap(), "bytes");
    }
}

#[test]
fn rank_folder_distributed_page_shows_ranks_and_stragglers() {
    let Some(mut b) = browser() else { return };
    let input = corpus().join("straggler");
    let input = input.to_str().unwrap();
    let url = offline_page(input, "offline-ranks.html");
    open_page(&mut b, &url, "overview", "offline-ranks-overview.png");
    check_overview(&mut b, input);
    open_page(&mut b, &url, "distributed", "offline-ranks-distributed.png");
    let r = doc(&["ranks", input, "--format", "json"])["report"].clone();
    let means = texts(&mut b, "table.ranks td[data-key=mean_step_ns]");
    for (i, rank) in r["ranks"].as_array().unwrap().iter().enumerate() {
        assert_shows(
            &means[i],
            rank["mean_step_ns"].as_f64().unwrap(),
            "mean step",
        );
    }
    let wait = texts(
        &mut b,
        "table.stragglers td[data-key=caused_wait_per_step_ns]",
    );
    assert_shows(
        &wait[0],
        r["stragglers"][0]["caused_wait_per_step_ns"]
            .as_f64()
            .unwrap(),
        "wait",
    );
    assert_shows(
        &texts(&mut b, "[data-key=max_skew]")[0],
        r["skew"]["max_skew_ns"].as_f64().unwrap(),
        "skew",
    );
}

/// The timeline queries the page made since `from` (path, bytes).
fn timeline_queries(b: &mut Browser, from: usize) -> Vec<(String, u64)> {
    let log = b.eval(&format!(
        "K.apiLog.slice({from}).filter(e => e.path.includes('/timeline?')).map(e => [e.path, e.bytes])"
    ));
    log.as_array()
        .unwrap()
        .iter()
        .map(|e| (e[0].as_str().unwrap().to_owned(), e[1].as_u64().unwrap()))
        .collect()
}

/// A query parameter of an API path.
fn param(path: &str, key: &str) -> String {
    let query = path.split_once('?').map_or("", |(_, q)| q);
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{path} has no {key}"))
        .to_owned()
}

#[test]
fn timeline_zooms_with_debounced_window_queries() {
    let Some(mut b) = browser() else { return };
    let url = offline_page(GPU_TRACE, "offline-timeline.html");
    open_page(&mut b, &url, "trace", "offline-timeline-full.png");
    b.wait_for(
        "document.getElementById('timeline').dataset.end !== undefined",
        20,
    );
    let tracks = b.eval("K.api('/api/v1/runs/offline/timeline/tracks?trace=0')");
    let ids: Vec<String> = tracks["tracks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].to_string())
        .collect();
    let first = timeline_queries(&mut b, 0);
    assert_eq!(first.len(), 1, "one query for the first paint: {first:?}");
    assert_eq!(param(&first[0].0, "start_ns"), "0");
    assert_eq!(param(&first[0].0, "end_ns"), tracks["t1_ns"].to_string());
    assert_eq!(param(&first[0].0, "tracks"), ids.join(","));
    let before = b.eval("K.apiLog.length").as_u64().unwrap() as usize;
    // Five wheel steps in a burst: one query after the debounce, for a narrower window.
    b.eval(
        "(() => { const c = document.getElementById('timeline'); const r = c.getBoundingClientRect();
          for (let i = 0; i < 5; i++) c.dispatchEvent(new WheelEvent('wheel', {deltaY: -100, clientX: r.left + 600, clientY: r.top + 20, bubbles: true, cancelable: true})); })()",
    );
    b.wait_for(&format!("K.apiLog.length > {before}"), 10);
    b.eval("new Promise(r => setTimeout(r, 400))");
    let zoomed = timeline_queries(&mut b, before);
    assert_eq!(
        zoomed.len(),
        1,
        "the burst is debounced into one query: {zoomed:?}"
    );
    let (path, bytes) = &zoomed[0];
    let start: f64 = param(path, "start_ns").parse().unwrap();
    let end: f64 = param(path, "end_ns").parse().unwrap();
    let full = tracks["t1_ns"].as_f64().unwrap();
    // 0.8^5 of the range, around the pointer.
    assert!(
        (end - start) < 0.4 * full && (end - start) > 0.3 * full,
        "{start}..{end} of {full}"
    );
    let canvas_px = b
        .eval("document.getElementById('timeline').width")
        .as_u64()
        .unwrap();
    assert_eq!(param(path, "width_px"), (canvas_px - 180).to_string());
    assert!(*bytes < 1 << 20, "a window's payload is {bytes} bytes");
    // The page drew the window it asked for.
    let shown_start: f64 = b
        .eval("Number(document.getElementById('timeline').dataset.start)")
        .as_f64()
        .unwrap();
    assert!((shown_start - start).abs() <= 1.0);
    b.screenshot(&screenshot_dir().join("offline-timeline-zoomed.png"));
    assert!(b.errors().is_empty(), "{:?}", b.errors());
}

#[test]
fn finding_moves_the_timeline_to_its_evidence() {
    let Some(mut b) = browser() else { return };
    let input = corpus().join("straggler");
    let input = input.to_str().unwrap();
    let url = offline_page(input, "offline-jump.html");
    open_page(&mut b, &url, "overview", "offline-jump-overview.png");
    // ST001 names the slowest step of its worst rank first in its evidence.
    let report = doc(&["report", input, "--format", "json"]);
    let findings = report["findings"].as_array().unwrap();
    let k = findings
        .iter()
        .position(|f| f["id"] == "ST001")
        .expect("ST001 in the straggler corpus");
    let f = &findings[k];
    let step = f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|e| {
            let e = e.as_str()?;
            let at = e.find("ProfilerStep#")?;
            let digits: String = e[at + 13..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            Some(format!("ProfilerStep#{digits}"))
        })
        .expect("a step in the evidence");
    // The page says over which ranks the finding was seen.
    let ranks = b.eval(&format!(
        "document.querySelectorAll('article.finding')[{k}].querySelector('[data-key=\"ranks\"]').textContent"
    ));
    let a = &f["across_ranks"];
    assert_eq!(
        ranks.as_str().unwrap(),
        format!(
            "{} of {}: {}",
            f["confidence"]["ranks"],
            f["confidence"]["of_ranks"],
            a["seen_on"].as_str().unwrap()
        )
    );
    let ov = doc(&["overview", input, "--format", "json"]);
    let (ti, trace) = ov["traces"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        // Grouped across the ranks, the finding shows (and jumps to) its worst rank.
        .find(|(_, t)| t["path"] == f["across_ranks"]["worst_trace"])
        .expect("the finding's trace");
    let s = trace["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == step.as_str())
        .unwrap();
    b.eval(&format!(
        "document.querySelector('button[data-finding=\"{k}\"]').click()"
    ));
    b.wait_for("document.body.dataset.page === 'trace' && document.body.dataset.ready === 'yes' && document.getElementById('timeline').dataset.start !== undefined", 20);
    let t0 = b.eval(&format!(
        "K.api('/api/v1/runs/offline/timeline/tracks?trace={ti}').then(t => String(t.t0_ns))"
    ));
    // Epoch ns exceed a double's integers: compare in integers here.
    let t0: i64 = t0.as_str().unwrap().parse::<f64>().unwrap() as i64;
    let step_start = s["start_ns"].as_i64().unwrap() - t0;
    let step_end = step_start + s["dur_ns"].as_i64().unwrap();
    let start = b
        .eval("Number(document.getElementById('timeline').dataset.start)")
        .as_f64()
        .unwrap();
    let end = b
        .eval("Number(document.getElementById('timeline').dataset.end)")
        .as_f64()
        .unwrap();
    assert!(
        start <= step_start as f64 && end >= step_end as f64,
        "the timeline shows {start}..{end}, the step {step} is {step_start}..{step_end}"
    );
    assert!(
        end - start < 2.0 * (step_end - step_start) as f64,
        "zoomed onto the step"
    );
    let jump = b.eval("document.getElementById('timeline-status').dataset.jump");
    assert_eq!(jump, format!("ST001: {step}").as_str());
    assert!(b
        .eval("location.hash")
        .as_str()
        .unwrap()
        .contains(&format!("trace={ti}")));
    b.screenshot(&screenshot_dir().join("offline-jump-timeline.png"));
    assert!(b.errors().is_empty(), "{:?}", b.errors());
}

/// An Nsight Systems export's offline page: the NVTX page shows the `nvtx` document's
/// ranges, in its order, with its numbers.
#[test]
fn nsys_export_nvtx_page_shows_the_documents_numbers() {
    let Some(mut b) = browser() else { return };
    let input =
        "crates/kinetoscope-trace/tests/fixtures/nsys/cs336-a100-2p7b-nvtx/result_2_7B_nvtx.sqlite";
    let url = offline_page(input, "offline-nsys.html");
    open_page(&mut b, &url, "nvtx", "offline-nsys-nvtx.png");
    let nvtx = doc(&["nvtx", input, "--format", "json", "--top", "100"]);
    check_table(
        &mut b,
        "nvtx",
        &nvtx["traces"][0]["ranges"],
        &["count", "total_ns", "gpu_time_ns"],
    );
    assert!(b.errors().is_empty(), "{:?}", b.errors());
}
