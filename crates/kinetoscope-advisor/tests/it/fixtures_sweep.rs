//! The advisor over every reader fixture (GPU traces from several PyTorch versions, a
//! ROCm trace, rank files): no panic, and every finding's impact fits in the step; plus
//! the GPU rules on a real GPU training trace with known properties.

use std::path::{Path, PathBuf};

use kinetoscope_advisor::{Config, Severity, TraceReport};

use crate::common::{assert_findings_fit, expect_finding, fixtures, report_file};

/// The advisor's report on a fixture, default thresholds.
fn report(path: &Path) -> TraceReport {
    report_file(path, &Config::default())
}

#[test]
fn every_fixture_gives_consistent_findings() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .chain(std::fs::read_dir(fixtures().join("ranks")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in files {
        assert_findings_fit(&report(&f), &f.display().to_string());
    }
}

/// The TensorBoard plugin's ResNet-50 sample (1 GPU, PyTorch 1.8, DataLoader with
/// pageable copies, the for-loop SGD): its known problems are all reported.
#[test]
fn gpu_rules_on_the_tensorboard_resnet_sample() {
    let r = report(&fixtures().join("worker0.1623143089861.pt.trace.json.gz"));
    let find = |id: &str| expect_finding(&r.findings, id);
    let util = find("GP001");
    assert_eq!(util.severity, Severity::Warning);
    let gpu = &r.summary.gpus[0];
    let step_ms = r.summary.step_stats.as_ref().unwrap().mean_ns / 1e6;
    // Impact = the time the GPU waits for the host: the idle time (no kernel running)
    // less copies and work already queued, most of it here.
    let idle = (1.0 - gpu.utilization.unwrap()) * step_ms;
    let waiting = util.impact_ns_per_step / 1e6;
    assert!(
        waiting <= idle && waiting > 0.9 * idle,
        "{waiting} of {idle} ms"
    );
    assert!(find("IN001").impact_share * 100.0 > 5.0);
    // Host-wait gaps are part of the idle time, and the DataLoader is what the host was
    // doing during most of them.
    let gaps = find("GP005");
    assert!(gaps.impact_ns_per_step <= util.impact_ns_per_step + 1e-3);
    assert!(
        gaps.evidence[2].contains("enumerate(DataLoader)"),
        "{:?}",
        gaps.evidence
    );
    assert!(find("TR001").evidence[0].contains("Pageable"));
    assert!(find("GP002").title.contains("kernels per step"));
    assert!(find("OP001").severity >= Severity::Info);
    // FP32 ResNet on a Tesla V100-DGXS (the V100 SXM2 row of the peak table): GEMM
    // FLOPs counted against its FP32 peak.
    assert!(r.flops.flops_per_step > 0.0);
    assert_eq!(r.flops.gpu.as_ref().unwrap().model, "V100 SXM2");
    let mfu = r.flops.mfu.unwrap();
    assert!(mfu > 0.0 && mfu < 0.01, "{mfu}");
}
