//! Row by row against TraceLens's own perf reports for the H100 and MI300X Qwen1.5-0.5B
//! traces (`fixtures/tracelens/`, reports in `fixtures/tracelens_reference/`, columns
//! subset by `scripts/tracelens_reference/subset.py`): the kernel summary per name, each
//! op's direct GPU time and launching calls, each op + shape group's count and times,
//! and each perf-model family's GFLOP and bytes per shape. Every documented definition
//! difference (`docs/metrics.md`, "Perf model") is asserted as that difference.

use std::collections::BTreeMap;

use kinetoscope_analysis::kernels::{analyze_kernels, KernelGroupBy};
use kinetoscope_analysis::ops::{analyze_ops, OpGroupBy};
use kinetoscope_analysis::perf::devices::Units;
use kinetoscope_analysis::perf::family::Family;
use kinetoscope_analysis::perf::flops::Precision;
use kinetoscope_analysis::perf::{analyze_perf, PerfOptions, PerfRow, PerfTable};
use kinetoscope_trace::Trace;

use crate::common::{fixtures, read};

type Row = BTreeMap<String, String>;

fn trace(run: &str) -> Trace {
    read(
        &fixtures()
            .join("tracelens")
            .join(format!("{run}__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz")),
    )
}

fn reference(run: &str, file: &str) -> Vec<Row> {
    let p = fixtures()
        .join("tracelens_reference")
        .join(format!("{run}_qwen"))
        .join(file);
    let mut r = csv::Reader::from_path(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    r.deserialize()
        .map(|row| row.unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

fn num(row: &Row, col: &str) -> f64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col} = {:?} is not a number", row[col]))
}

/// A Python tuple or list text (`((8944, 1024), (1024,))`, `['a', 'b']`) as the JSON
/// list kinetoscope prints, without spaces, so the two compare as text.
fn canon(text: &str) -> String {
    let t: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '(' => '[',
            ')' => ']',
            '\'' => '"',
            c => c,
        })
        .collect();
    t.replace(",]", "]")
}

const RUNS: [&str; 2] = ["h100", "mi300"];

#[test]
fn kernel_summary_per_name_is_exact() {
    for run in RUNS {
        let t = trace(run);
        let ours = analyze_kernels(&t, KernelGroupBy::Name);
        let mut theirs: BTreeMap<String, (u64, f64)> = BTreeMap::new();
        for r in reference(run, "kernel_summary.csv") {
            let e = theirs.entry(r["Kernel name"].clone()).or_default();
            e.0 += num(&r, "Kernel duration (µs)_count") as u64;
            e.1 += num(&r, "Kernel duration (µs)_sum");
        }
        assert!(theirs.len() > 10, "{run}: {} kernel names", theirs.len());
        for (name, (count, sum_us)) in &theirs {
            let row = ours
                .rows
                .iter()
                .find(|r| &r.name == name)
                .unwrap_or_else(|| panic!("{run}: no kernel row {name}"));
            assert_eq!(row.calls, *count, "{run}: {name} count");
            assert_eq!(
                row.total_ns,
                (sum_us * 1000.0).round() as i64,
                "{run}: {name} time"
            );
        }
    }
}

#[test]
fn ops_direct_time_and_launching_calls_match_count() {
    for run in RUNS {
        let t = trace(run);
        let ours = analyze_ops(&t, OpGroupBy::Name);
        let reference = reference(run, "ops_summary.csv");
        assert!(reference.len() > 10);
        let mut fewer_launching = 0;
        for r in &reference {
            let name = &r["name"];
            let row = ours
                .rows
                .iter()
                .find(|o| &o.name == name)
                .unwrap_or_else(|| panic!("{run}: no op row {name}"));
            let direct_us = row.device_self_ns as f64 / 1000.0;
            assert!(
                (direct_us - num(r, "total_direct_kernel_time_sum")).abs() <= 0.01,
                "{run}: {name} direct GPU time {direct_us} vs {}",
                r["total_direct_kernel_time_sum"]
            );
            assert_eq!(row.launching_calls, num(r, "Count") as u64, "{run}: {name}");
            // TraceLens's Count is launching instances; `calls` counts every call.
            assert!(row.calls >= row.launching_calls);
            fewer_launching += usize::from(row.calls > row.launching_calls);
        }
        assert!(
            fewer_launching >= 1,
            "{run}: aten::arange also runs without launching GPU work"
        );
        // The GPU work without a launch record is in no op row, and the read report
        // counts it.
        assert!(t.report.gpu_without_launch > 0, "{run}");
    }
}

/// `unified_perf_summary.csv` groups launching instances by name, dims, types, strides
/// and concrete inputs; kinetoscope's shape rows group every call by name and dims.
#[test]
fn op_and_shape_groups_match() {
    for run in RUNS {
        let t = trace(run);
        let ours = analyze_ops(&t, OpGroupBy::Shape);
        let perf = analyze_perf(&t, &PerfOptions::default());
        let mut theirs: BTreeMap<(String, String), (u64, f64, f64)> = BTreeMap::new();
        for r in reference(run, "unified_perf_summary.csv") {
            let e = theirs
                .entry((r["name"].clone(), canon(&r["Input Dims"])))
                .or_default();
            e.0 += num(&r, "operation_count") as u64;
            e.1 += num(&r, "total_duration_us");
            e.2 += num(&r, "Kernel Time (µs)_sum");
        }
        assert!(theirs.len() > 20, "{run}: {} groups", theirs.len());
        for ((name, dims), (count, host_us, kernel_us)) in &theirs {
            let row = ours
                .rows
                .iter()
                .find(|o| &o.name == name && canon(o.input_shape.as_deref().unwrap_or("")) == *dims)
                .unwrap_or_else(|| panic!("{run}: no shape row {name} {dims}"));
            // TraceLens keeps the launching calls of an op, and every call of an op it
            // models (`_scaled_dot_product_flash_attention` launches through a child).
            let expected = if row.launching_calls > 0 {
                row.launching_calls
            } else {
                row.calls
            };
            assert_eq!(expected, *count, "{run}: {name} {dims}");
            let ours_kernel = row.device_total_ns as f64 / 1000.0;
            let ours_host = if row.calls == *count {
                row.host_total_ns as f64 / 1000.0
            } else {
                // Calls that launched nothing are in kinetoscope's row, not TraceLens's:
                // kinetoscope's host time is the larger.
                assert!(row.host_total_ns as f64 / 1000.0 > *host_us);
                *host_us
            };
            assert!(
                (ours_host - host_us).abs() <= 0.001 * row.calls as f64,
                "{run}: {name} {dims} host {ours_host} vs {host_us}"
            );
            // TraceLens's kernel time is the busy time of each call's subtree; the perf
            // model measures the same, the ops table sums durations.
            let busy = perf
                .rows
                .iter()
                .filter(|p| &p.name == name && canon(&p.input_dims) == *dims)
                .map(|p| p.kernel_us)
                .sum::<f64>();
            let kinetoscope = if busy > 0.0 { busy } else { ours_kernel };
            assert!(
                (kinetoscope - kernel_us).abs() <= 0.01,
                "{run}: {name} {dims} kernel {kinetoscope} vs {kernel_us}"
            );
        }
    }
}

/// TraceLens's perf-model file of each family.
const FAMILIES: [(&str, Family); 5] = [
    ("GEMM.csv", Family::Gemm),
    ("SDPA_fwd.csv", Family::Attention),
    ("BinaryElementwise.csv", Family::Elementwise),
    ("UnaryElementwise.csv", Family::Elementwise),
    ("Reduce_fwd.csv", Family::Reduction),
];

fn perf_row<'a>(p: &'a PerfTable, r: &Row) -> Option<&'a PerfRow> {
    p.rows.iter().find(|o| {
        o.name == r["name"]
            && canon(&o.input_dims) == canon(&r["Input Dims_first"])
            && canon(&o.dtypes) == canon(&r["Input type_first"])
            && canon(&o.concrete_inputs) == canon(&r["Concrete Inputs_first"])
    })
}

/// A row's units and precision as TraceLens's `Compute Spec` (`matrix_bf16`).
fn spec(row: &PerfRow) -> String {
    let units = match row.units {
        Some(Units::Matrix) => "matrix",
        Some(Units::Vector) => "vector",
        None => "none",
    };
    let precision = match row.precision {
        Some(Precision::Bf16) => "bf16",
        Some(Precision::Fp32) => "fp32",
        Some(Precision::Tf32) => "tf32",
        Some(Precision::Fp64) => "fp64",
        Some(Precision::Fp8) => "fp8",
        None => "none",
    };
    format!("{units}_{precision}")
}

/// Output elements of TraceLens's `Reduce_fwd` rows: it counts one output element
/// whatever `dim` keeps; kinetoscope counts the elements `dim` keeps. The difference,
/// in bytes, for a row.
fn reduce_output_difference(row: &PerfRow) -> f64 {
    let dims: Vec<Vec<i64>> = serde_json::from_str(&row.input_dims).unwrap();
    let kept: i64 = dims[0][..dims[0].len() - 1].iter().product();
    let elem = if row.dtypes.contains("float") {
        4.0
    } else {
        2.0
    };
    (kept - 1) as f64 * elem
}

#[test]
fn perf_model_gflop_and_bytes_per_shape() {
    let mut agreement: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for run in RUNS {
        let t = trace(run);
        let p = analyze_perf(&t, &PerfOptions::default());
        for (file, family) in FAMILIES {
            let rows = reference(run, file);
            assert!(!rows.is_empty(), "{run} {file}");
            for r in &rows {
                let ours =
                    perf_row(&p, r).unwrap_or_else(|| panic!("{run} {file}: no perf row {r:?}"));
                assert_eq!(ours.family, family, "{run}: {}", ours.name);
                let gflop = ours.gflop_per_call.expect("modelled");
                let bytes = ours.bytes_per_call.expect("modelled");
                let their_bytes = num(r, "Data Moved (MB)_first") * 1024.0 * 1024.0;
                assert!(
                    (gflop - num(r, "GFLOPS_first")).abs() <= 1e-9 * gflop.max(1e-3),
                    "{run} {file}: {} GFLOP {gflop} vs {}",
                    ours.name,
                    r["GFLOPS_first"]
                );
                let expected = if family == Family::Reduction {
                    their_bytes + reduce_output_difference(ours)
                } else {
                    their_bytes
                };
                assert!(
                    (bytes - expected).abs() <= 0.5,
                    "{run} {file}: {} bytes {bytes} vs {expected}",
                    ours.name
                );
                let e = agreement.entry(format!("{run} {file}")).or_default();
                e.0 += usize::from(family != Family::Reduction);
                e.1 += 1;
                // Their peak label (Compute Spec) is ours: units and precision.
                assert_eq!(spec(ours), r["Compute Spec"], "{run}: {}", ours.name);
            }
        }
        // No achieved rate exceeds its peak, and every modelled row on these known
        // devices has a roofline verdict.
        for r in &p.rows {
            if let (Some(a), Some(peak)) = (r.tflops, r.peak_tflops) {
                assert!(a <= peak, "{run}: {}", r.name);
            }
            if let (Some(a), Some(peak)) = (r.tbps, r.peak_tbps) {
                assert!(a <= peak, "{run}: {}", r.name);
            }
            if r.gflop_per_call.is_some() && r.kernel_us > 0.0 {
                assert!(r.roofline_fraction.is_some_and(|f| f > 0.0 && f <= 1.0));
            }
        }
    }
    // Every TraceLens row was matched; the exact ones are all but Reduce_fwd's, whose
    // bytes differ by the documented output count.
    for (file, (exact, rows)) in &agreement {
        eprintln!("{file}: {exact} of {rows} exact");
    }
    assert_eq!(agreement.len(), 10);
}

/// An operator with recorded inputs on thread 1.
fn op(name: &str, ts: u64, dur: u64, ext: u64, dims: &str, types: &str) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": {ts}, "dur": {dur}, "args": {{"External id": {ext}, "Input Dims": {dims}, "Input type": {types}}}}}"#
    )
}

/// A kernel launch on thread 1 and its kernel on stream 7.
fn launch(name: &str, ts: u64, ext: u64, corr: u64, start: u64, dur: u64) -> [String; 2] {
    [
        format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 2, "args": {{"External id": {ext}, "correlation": {corr}}}}}"#
        ),
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": 0, "tid": 7, "ts": {start}, "dur": {dur}, "args": {{"device": 0, "stream": 7, "correlation": {corr}}}}}"#
        ),
    ]
}

/// Same-name nesting (`aten::where` in `aten::where`, the outer one with a second
/// child, so not one merged call), a GEMM under an autograd node, and a GPU the peak
/// table does not know.
#[test]
fn nesting_autograd_and_an_unknown_device() {
    let dims = "[[4, 8], [4, 8], [4, 8]]";
    let types = r#"["bool", "float", "float"]"#;
    let mut events = vec![
        op("aten::where", 0, 100, 1, dims, types),
        op("aten::where", 10, 50, 2, dims, types),
        op(
            "aten::add",
            70,
            20,
            3,
            "[[4, 8], [4, 8], []]",
            r#"["float", "float", "Scalar"]"#,
        ),
        op("MmBackward0", 200, 100, 10, "[]", "[]"),
        op(
            "aten::mm",
            210,
            50,
            11,
            "[[64, 128], [128, 32]]",
            r#"["float", "float"]"#,
        ),
    ];
    events.extend(launch("where_kernel_inner", 20, 2, 100, 1000, 20));
    events.extend(launch("where_kernel_outer", 62, 1, 101, 1030, 5));
    events.extend(launch("add_kernel", 75, 3, 102, 1040, 4));
    events.extend(launch("sgemm_64x64_nn", 220, 11, 103, 1100, 30));
    let json = format!(
        r#"{{"schemaVersion": 1, "deviceProperties": [{{"id": 0, "name": "Mystery Accelerator 9000", "totalGlobalMem": 1000, "computeMajor": 9, "computeMinor": 0}}], "traceEvents": [{}]}}"#,
        events.join(",\n")
    );
    let t = crate::common::read_json(&json);

    // ops: the nested call counts in calls and self times, once in the totals.
    let ops = analyze_ops(&t, OpGroupBy::Name);
    let w = ops.rows.iter().find(|r| r.name == "aten::where").unwrap();
    assert_eq!((w.calls, w.launching_calls), (2, 2));
    assert_eq!(
        w.host_total_ns, 100_000,
        "the outermost call's inclusive time"
    );
    // The outer call's subtree: both `where` kernels and the `add` one (20 + 5 + 4 µs);
    // adding the inner call's total again would make it 49.
    assert_eq!(w.device_total_ns, 29_000, "the inner call's kernel once");
    assert_eq!(w.device_self_ns, 25_000);
    let backward = ops.rows.iter().find(|r| r.name == "MmBackward0").unwrap();
    assert_eq!(
        (backward.device_total_ns, backward.launching_calls),
        (30_000, 0)
    );

    // perf: the GEMM under the autograd node is modelled; the inner `where` is the
    // unit, the outer one's own kernel a direct row beside it; rates without roofline.
    let p = analyze_perf(&t, &PerfOptions::default());
    let mm = p.rows.iter().find(|r| r.name == "aten::mm").unwrap();
    assert_eq!(mm.family, Family::Gemm);
    assert_eq!(mm.gflop_per_call, Some(2.0 * 64.0 * 32.0 * 128.0 / 1e9));
    assert_eq!(mm.kernel_us, 30.0);
    let tflops = 2.0 * 64.0 * 32.0 * 128.0 / 30e-6 / 1e12;
    assert!((mm.tflops.unwrap() - tflops).abs() < 1e-12);
    assert_eq!(
        (mm.peak_tflops, mm.bound, mm.roofline_fraction, mm.lost_us),
        (None, None, None, None)
    );
    let wheres: Vec<&PerfRow> = p.rows.iter().filter(|r| r.name == "aten::where").collect();
    assert_eq!(wheres.len(), 2);
    let unit = wheres.iter().find(|r| !r.direct).unwrap();
    let direct = wheres.iter().find(|r| r.direct).unwrap();
    assert_eq!(
        (unit.calls, unit.kernel_us, unit.gflop_per_call),
        (1, 20.0, Some(32e-9))
    );
    // where(bool cond, a, b): 32 outputs in the values' dtype; 32 + 128 + 128 + 128 bytes.
    assert_eq!(unit.bytes_per_call, Some(416.0));
    assert_eq!(
        (direct.calls, direct.kernel_us, direct.gflop_per_call),
        (1, 5.0, None)
    );
    let kernel_sum: f64 = p.rows.iter().map(|r| r.kernel_us).sum();
    assert_eq!(kernel_sum, 59.0, "every kernel once");
    assert!(p.warnings.iter().any(|n| matches!(
        n,
        kinetoscope_analysis::note::Note::NoDevicePeak { device: Some(d), compute: true, bandwidth: true }
            if d == "Mystery Accelerator 9000"
    )));

    // --peak-tflops / --peak-tbps give the verdict; a peak below the achieved rate
    // refuses the rate instead of printing it.
    let given = PerfOptions {
        peak_tflops: Some(19.5),
        peak_tbps: Some(3.0),
        top: 0,
    };
    let p = analyze_perf(&t, &given);
    let mm = p.rows.iter().find(|r| r.name == "aten::mm").unwrap();
    // 524,288 FLOP over 57,344 bytes: 9.1 FLOP/byte, above the ridge 19.5 / 3 = 6.5.
    assert_eq!(mm.bound, Some(kinetoscope_analysis::perf::Bound::Compute));
    assert!(mm.roofline_fraction.is_some_and(|f| f > 0.0 && f < 1.0));
    let low = PerfOptions {
        peak_tflops: Some(tflops / 2.0),
        ..given
    };
    let p = analyze_perf(&t, &low);
    let mm = p.rows.iter().find(|r| r.name == "aten::mm").unwrap();
    assert!(mm.above_peak && mm.tflops.is_none() && mm.lost_us.is_none());
    assert!(p.warnings.iter().any(|n| matches!(
        n,
        kinetoscope_analysis::note::Note::RatesAbovePeak { rows: 1 }
    )));
}
