//! Memory by `nn.Module` at the peak, on the corpus run folder's training phase (a real
//! CPU trace with `with_stack`, `profile_memory`: four forward/backward microsteps of a
//! small transformer).

use std::collections::HashSet;

use kinetoscope_analysis::memory::{analyze_trace, trace_source, MemoryOptions};
use kinetoscope_trace::CategoryKind;

use crate::common::{corpus, read};

const TRAINING: &str = "run_folder/20261124_215816/stage3-training_microsteps_trace.json.gz";

#[test]
fn live_bytes_at_the_peak_add_up_and_name_real_modules() {
    let trace = read(&corpus(TRAINING));
    let view = analyze_trace(&trace, &MemoryOptions::default());
    let cpu = &view.devices[0];
    let m = cpu
        .modules_at_peak
        .as_ref()
        .expect("module frames and addresses");
    let peak = cpu.peak_allocated.as_ref().unwrap().bytes;
    assert_eq!(m.peak_bytes, peak);
    assert_eq!(m.rows.iter().map(|r| r.bytes).sum::<i64>(), m.traced_bytes);

    // Two independent sources agree: replaying `Bytes` by `Addr` up to the peak leaves
    // at most the peak live, and at least the peak less what was allocated before the
    // first record (the recorded `Total Allocated` before it).
    let input = trace_source::from_trace(&trace);
    let first = &input.records[0];
    let before = first.total_allocated.unwrap() - first.bytes;
    assert!(m.traced_bytes <= peak, "{} > {peak}", m.traced_bytes);
    assert!(
        m.traced_bytes >= peak - before,
        "{} < {peak} - {before}",
        m.traced_bytes
    );

    // Every path is made of the trace's own module frames, outermost first.
    let frames: HashSet<&str> = (0..trace.events.len())
        .filter(|&i| trace.categories.kind(trace.events.cat[i]) == CategoryKind::PythonFunction)
        .filter_map(|i| {
            trace
                .strings
                .get(trace.events.name[i])
                .strip_prefix("nn.Module: ")
        })
        .collect();
    let paths: Vec<&str> = m.rows.iter().filter_map(|r| r.module.as_deref()).collect();
    assert!(paths.len() >= 3, "{paths:?}");
    for p in &paths {
        assert!(p.starts_with("TinyGPT_0"), "{p}");
        for part in p.split('/') {
            assert!(frames.contains(part), "{part} of {p} is no module frame");
        }
    }
    // Most bytes first; shares are of the peak.
    for w in m.rows.windows(2) {
        assert!(w[0].bytes >= w[1].bytes);
    }
    for r in &m.rows {
        assert!((r.share_of_peak - r.bytes as f64 / peak as f64).abs() < 1e-12);
    }
}

#[test]
fn a_trace_without_module_frames_has_no_module_view() {
    // The corpus `leak` run records memory without `with_stack`: no module frames.
    let trace = read(&corpus("leak/trace.json.gz"));
    let view = analyze_trace(&trace, &MemoryOptions::default());
    assert!(view.devices.iter().all(|d| d.records > 0));
    assert!(view.devices.iter().all(|d| d.modules_at_peak.is_none()));
}
