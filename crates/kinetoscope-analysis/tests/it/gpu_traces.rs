//! Real GPU traces whose quirks the analyses must survive (`tests/fixtures/gpu_traces/`,
//! see `SOURCE.md` there).
//!
//! * `linear_kineto_3steps.json.gz` (param, RTX 2080 Ti): its operators' `External id`s
//!   and its runtime calls' are different numberings, so the ids link kernels to the
//!   wrong operators (`aten::view`, `aten::transpose`) or to none. The expected numbers
//!   were computed independently (Python: innermost `cpu_op`/`user_annotation` around
//!   each runtime call on its thread, kernel and memset time summed per name).

use kinetoscope_analysis::kernels::{analyze_kernels, KernelGroupBy};
use kinetoscope_analysis::note::Note;
use kinetoscope_analysis::ops::{analyze_ops, OpGroupBy};
use kinetoscope_analysis::summary::summarize;
use kinetoscope_trace::Trace;

use crate::common::{fixtures, read};

fn gpu_trace(name: &str) -> Trace {
    read(&fixtures().join("gpu_traces").join(name))
}

/// Operator ids and runtime ids numbered apart: device time goes to the operator each
/// kernel was launched inside, host self time is never negative, and the repair is
/// reported.
#[test]
fn launch_links_follow_time_when_ids_disagree() {
    let t = gpu_trace("linear_kineto_3steps.json.gz");
    let repaired = Note::RepairedLaunchLinks {
        relinked: 62,
        unlinked: 0,
        nested: 984,
    };
    assert!(summarize(&t).warnings.contains(&repaired));

    let ops = analyze_ops(&t, OpGroupBy::Name);
    assert!(ops.warnings.contains(&repaired));
    let device_self = |name: &str| {
        ops.rows
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no row {name}"))
            .device_self_ns
    };
    let expected = [
        ("aten::mm", 14_019_000),
        ("aten::addmm", 8_607_000),
        ("aten::_foreach_add_", 1_525_000),
        ("aten::sum", 1_236_000),
        ("aten::add_", 1_051_000),
        ("aten::threshold_backward", 860_000),
    ];
    let top: Vec<(&str, i64)> = ops
        .rows
        .iter()
        .take(6)
        .map(|r| (r.name.as_str(), r.device_self_ns))
        .collect();
    assert_eq!(top, expected);
    // Views and shape queries launch nothing (the ids put kernels on them).
    for name in [
        "aten::view",
        "aten::result_type",
        "aten::transpose",
        "aten::as_strided",
    ] {
        assert_eq!(device_self(name), 0, "{name}");
    }
    // Every kernel and memset (28,320 µs) is in some operator's row.
    let all: i64 = ops.rows.iter().map(|r| r.device_self_ns).sum();
    assert_eq!(all, 28_320_000);
    assert!(ops.rows.iter().all(|r| r.host_self_ns >= 0));
    assert!(!ops
        .warnings
        .iter()
        .any(|w| matches!(w, Note::UnmatchedRuntimeCalls { .. })));

    // The kernel view names the same operators.
    let kernels = analyze_kernels(&t, KernelGroupBy::Properties);
    for row in kernels.rows.iter().filter(|r| r.name.contains("sgemm")) {
        let op = &row.properties.as_ref().unwrap().operator;
        assert!(
            op == "aten::mm" || op == "aten::addmm",
            "{} ← {op}",
            row.name
        );
    }
}
