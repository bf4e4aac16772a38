//! The sheets of the workbook, one per view, each built from its engine document:
//! the rows are the documents' rows, in their order, the numbers their fields (only
//! converted: ns to µs).

use kinetoscope_analysis::overview::Parts;
use kinetoscope_engine::WorkbookDocument;

use super::{Kind, Sheet, V};
use crate::format::us;
use crate::perf::{bound_name, family_name, spec};

/// Makes one sheet of a workbook document.
pub(super) type MakeSheet = fn(&WorkbookDocument) -> Sheet;

/// The makers of every sheet of `doc`, in workbook order (`collectives` only when a
/// trace has some): each sheet is made, written and dropped in turn, so one sheet's
/// rows at most are held beside the documents.
pub(super) fn all(doc: &WorkbookDocument) -> Vec<MakeSheet> {
    let mut sheets: Vec<MakeSheet> = vec![
        summary,
        overview,
        |d| ops(d, false),
        |d| ops(d, true),
        kernels,
        perf,
        perf_families,
        memory,
        memory_operators,
    ];
    if doc.comm.traces.iter().any(|t| !t.collectives.is_empty()) {
        sheets.push(collectives);
    }
    sheets.push(findings);
    sheets
}

/// The `trace` and `rank` columns every per-trace sheet starts with.
const TRACE: [(&str, Kind); 2] = [("trace", Kind::Name), ("rank", Kind::Count)];

/// `TRACE` followed by `rest`.
fn columns(rest: &[(&'static str, Kind)]) -> Vec<(&'static str, Kind)> {
    TRACE.iter().chain(rest).copied().collect()
}

/// `path` and `rank` cells followed by `rest`.
fn row(path: &str, rank: Option<i64>, rest: Vec<V>) -> Vec<V> {
    let mut cells = vec![V::from(path), V::from(rank)];
    cells.extend(rest);
    cells
}

/// Nanoseconds as a µs cell.
fn us_cell(ns: f64) -> V {
    V::N(us(ns))
}

/// `summary`: per trace, steps, step time, communication, FLOPs, MFU and the number of
/// findings of each severity.
fn summary(doc: &WorkbookDocument) -> Sheet {
    use kinetoscope_advisor::Severity;
    let mut s = Sheet::new(
        "summary",
        columns(&[
            ("steps", Kind::Count),
            ("mean_step_us", Kind::Us),
            ("median_step_us", Kind::Us),
            ("communication_us_per_step", Kind::Us),
            ("gflop_per_step", Kind::Num),
            ("tflops", Kind::Num),
            ("mfu", Kind::Share),
            ("critical", Kind::Count),
            ("warning", Kind::Count),
            ("info", Kind::Count),
        ]),
    );
    for t in &doc.report.traces {
        let stats = t.summary.step_stats.as_ref();
        let count = |sev: Severity| t.findings.iter().filter(|f| f.severity == sev).count();
        s.push(row(
            &t.path,
            t.rank,
            vec![
                t.summary.steps.into(),
                stats.map(|st| us(st.mean_ns)).into(),
                stats.map(|st| us(st.median_ns)).into(),
                us_cell(t.summary.communication_ns),
                (t.flops.flops_per_step / 1e9).into(),
                t.flops.tflops_per_s.into(),
                t.flops.mfu.into(),
                count(Severity::Critical).into(),
                count(Severity::Warning).into(),
                count(Severity::Info).into(),
            ],
        ));
    }
    s
}

/// `overview`: each trace's steps (time order) and its `average` row, µs per part.
fn overview(doc: &WorkbookDocument) -> Sheet {
    const PARTS: [&str; 8] = [
        "kernel_us",
        "memcpy_us",
        "memset_us",
        "communication_us",
        "runtime_us",
        "dataloader_us",
        "cpu_exec_us",
        "other_us",
    ];
    let mut cols = vec![("step", Kind::Text), ("total_us", Kind::Us)];
    cols.extend(PARTS.iter().map(|p| (*p, Kind::Us)));
    let mut s = Sheet::new("overview", columns(&cols));
    let parts = |p: &Parts<f64>| p.to_array().map(us_cell);
    for t in &doc.overview.traces {
        for st in &t.steps {
            let mut cells = vec![V::from(st.name.as_str()), us_cell(st.dur_ns as f64)];
            cells.extend(parts(&st.breakdown_ns.map(|v| v as f64)));
            s.push(row(&t.path, t.rank, cells));
        }
        if let Some(avg) = &t.average {
            let mut cells = vec![V::from("average"), us_cell(avg.dur_ns)];
            cells.extend(parts(&avg.breakdown_ns));
            s.push(row(&t.path, t.rank, cells));
        }
    }
    s
}

/// `ops` (by name) or `ops_by_shape` (by name and input shapes).
fn ops(doc: &WorkbookDocument, by_shape: bool) -> Sheet {
    let (name, src) = if by_shape {
        ("ops_by_shape", &doc.ops_by_shape)
    } else {
        ("ops", &doc.ops)
    };
    let mut cols = vec![("name", Kind::Name)];
    if by_shape {
        cols.push(("input_shape", Kind::Name));
    }
    cols.extend([
        ("calls", Kind::Count),
        ("launching_calls", Kind::Count),
        ("host_self_us", Kind::Us),
        ("host_total_us", Kind::Us),
        ("device_self_us", Kind::Us),
        ("device_total_us", Kind::Us),
        ("tc_eligible", Kind::Bool),
        ("tc_self_share", Kind::Share),
        ("tc_total_share", Kind::Share),
    ]);
    let mut s = Sheet::new(name, columns(&cols));
    for t in &src.traces {
        for r in &t.rows {
            let mut cells = vec![V::from(r.name.as_str())];
            if by_shape {
                cells.push(r.input_shape.clone().into());
            }
            cells.extend([
                r.calls.into(),
                r.launching_calls.into(),
                us_cell(r.host_self_ns as f64),
                us_cell(r.host_total_ns as f64),
                us_cell(r.device_self_ns as f64),
                us_cell(r.device_total_ns as f64),
                r.tc_eligible.into(),
                r.tc_self_share.into(),
                r.tc_total_share.into(),
            ]);
            s.push(row(&t.path, t.rank, cells));
        }
    }
    s
}

/// `kernels`: kernels by name.
fn kernels(doc: &WorkbookDocument) -> Sheet {
    let mut s = Sheet::new(
        "kernels",
        columns(&[
            ("name", Kind::Name),
            ("calls", Kind::Count),
            ("total_us", Kind::Us),
            ("mean_us", Kind::Us),
            ("min_us", Kind::Us),
            ("max_us", Kind::Us),
            ("tensor_cores", Kind::Bool),
            ("mean_blocks_per_sm", Kind::Num),
            ("mean_est_achieved_occupancy", Kind::Share),
        ]),
    );
    for t in &doc.kernels.traces {
        for r in &t.rows {
            let cells = vec![
                r.name.as_str().into(),
                r.calls.into(),
                us_cell(r.total_ns as f64),
                us_cell(r.mean_ns),
                us_cell(r.min_ns as f64),
                us_cell(r.max_ns as f64),
                r.tensor_cores.into(),
                r.mean_blocks_per_sm.into(),
                r.mean_est_achieved_occupancy.into(),
            ];
            s.push(row(&t.path, t.rank, cells));
        }
    }
    s
}

/// `perf`: the performance model's rows, ranked by time lost (the CSV's columns).
fn perf(doc: &WorkbookDocument) -> Sheet {
    let mut s = Sheet::new(
        "perf",
        columns(&[
            ("family", Kind::Text),
            ("name", Kind::Name),
            ("input_dims", Kind::Name),
            ("dtypes", Kind::Name),
            ("concrete_inputs", Kind::Text),
            ("calls", Kind::Count),
            ("direct", Kind::Bool),
            ("gflop_per_call", Kind::Num),
            ("bytes_per_call", Kind::Bytes),
            ("flop_per_byte", Kind::Num),
            ("kernel_us", Kind::Us),
            ("kernel_us_mean", Kind::Us),
            ("tflops", Kind::Num),
            ("tbps", Kind::Num),
            ("compute_spec", Kind::Text),
            ("peak_tflops", Kind::Num),
            ("peak_tbps", Kind::Num),
            ("bound", Kind::Text),
            ("roofline_fraction", Kind::Share),
            ("lost_us", Kind::Us),
            ("above_peak", Kind::Bool),
        ]),
    );
    for t in &doc.perf.traces {
        for r in &t.rows {
            let cells = vec![
                family_name(r.family).into(),
                r.name.as_str().into(),
                r.input_dims.as_str().into(),
                r.dtypes.as_str().into(),
                r.concrete_inputs.as_str().into(),
                r.calls.into(),
                r.direct.into(),
                r.gflop_per_call.into(),
                r.bytes_per_call.into(),
                r.flop_per_byte.into(),
                r.kernel_us.into(),
                r.kernel_us_mean.into(),
                r.tflops.into(),
                r.tbps.into(),
                spec(r.units, r.precision).into(),
                r.peak_tflops.into(),
                r.peak_tbps.into(),
                r.bound.map(bound_name).into(),
                r.roofline_fraction.into(),
                r.lost_us.into(),
                r.above_peak.into(),
            ];
            s.push(row(&t.path, t.rank, cells));
        }
    }
    s
}

/// `perf_families`: the performance model's per-family summary.
fn perf_families(doc: &WorkbookDocument) -> Sheet {
    let mut s = Sheet::new(
        "perf_families",
        columns(&[
            ("family", Kind::Text),
            ("rows", Kind::Count),
            ("calls", Kind::Count),
            ("kernel_us", Kind::Us),
            ("kernel_share", Kind::Share),
            ("gflop", Kind::Num),
            ("bytes", Kind::Bytes),
            ("lost_us", Kind::Us),
            ("tflops", Kind::Num),
            ("tbps", Kind::Num),
        ]),
    );
    for t in &doc.perf.traces {
        for f in &t.families {
            let cells = vec![
                family_name(f.family).into(),
                f.rows.into(),
                f.calls.into(),
                f.kernel_us.into(),
                f.kernel_share.into(),
                f.gflop.into(),
                f.bytes.into(),
                f.lost_us.into(),
                f.tflops.into(),
                f.tbps.into(),
            ];
            s.push(row(&t.path, t.rank, cells));
        }
    }
    s
}

/// The rank of a trace of the workbook, by its path (the memory view has none).
fn rank_of(doc: &WorkbookDocument, path: &str) -> Option<i64> {
    doc.report
        .traces
        .iter()
        .find(|t| t.path == path)
        .and_then(|t| t.rank)
}

/// `memory`: per device, its peaks and capacity.
fn memory(doc: &WorkbookDocument) -> Sheet {
    let mut s = Sheet::new(
        "memory",
        columns(&[
            ("device", Kind::Text),
            ("records", Kind::Count),
            ("capacity_bytes", Kind::Bytes),
            ("peak_allocated_bytes", Kind::Bytes),
            ("peak_allocated_op", Kind::Name),
            ("peak_reserved_bytes", Kind::Bytes),
            ("peak_allocated_share_of_capacity", Kind::Share),
            ("peak_reserved_share_of_capacity", Kind::Share),
            ("out_of_memory_events", Kind::Count),
        ]),
    );
    for t in &doc.memory.traces {
        let rank = rank_of(doc, &t.path);
        for d in &t.devices {
            let peak = d.peak_allocated.as_ref();
            let cells = vec![
                d.device.as_str().into(),
                d.records.into(),
                d.capacity_bytes.into(),
                peak.map(|p| p.bytes).into(),
                peak.and_then(|p| p.op.clone()).into(),
                d.peak_reserved.as_ref().map(|p| p.bytes).into(),
                d.peak_allocated_share_of_capacity.into(),
                d.peak_reserved_share_of_capacity.into(),
                d.out_of_memory_events.into(),
            ];
            s.push(row(&t.path, rank, cells));
        }
    }
    s
}

/// `memory_operators`: per device, each operator's allocations.
fn memory_operators(doc: &WorkbookDocument) -> Sheet {
    let mut s = Sheet::new(
        "memory_operators",
        columns(&[
            ("device", Kind::Text),
            ("name", Kind::Name),
            ("calls", Kind::Count),
            ("size_increase_bytes", Kind::Bytes),
            ("self_size_increase_bytes", Kind::Bytes),
            ("allocation_count", Kind::Count),
            ("self_allocation_count", Kind::Count),
            ("allocation_size_bytes", Kind::Bytes),
            ("self_allocation_size_bytes", Kind::Bytes),
        ]),
    );
    for t in &doc.memory.traces {
        let rank = rank_of(doc, &t.path);
        for d in &t.devices {
            for o in &d.operators {
                let cells = vec![
                    d.device.as_str().into(),
                    o.name.as_str().into(),
                    o.calls.into(),
                    o.size_increase_bytes.into(),
                    o.self_size_increase_bytes.into(),
                    o.allocation_count.into(),
                    o.self_allocation_count.into(),
                    o.allocation_size_bytes.into(),
                    o.self_allocation_size_bytes.into(),
                ];
                s.push(row(&t.path, rank, cells));
            }
        }
    }
    s
}

/// `collectives`: collectives by (collective, process group, algorithm).
fn collectives(doc: &WorkbookDocument) -> Sheet {
    let mut s = Sheet::new(
        "collectives",
        columns(&[
            ("collective", Kind::Text),
            ("process_group", Kind::Text),
            ("process_group_desc", Kind::Text),
            ("algorithm", Kind::Text),
            ("dtype", Kind::Text),
            ("group_size", Kind::Count),
            ("count", Kind::Count),
            ("on_gpu", Kind::Bool),
            ("bytes", Kind::Bytes),
            ("latency_us", Kind::Us),
            ("mean_latency_us", Kind::Us),
            ("algbw_gbps", Kind::Num),
            ("busbw_gbps", Kind::Num),
        ]),
    );
    for t in &doc.comm.traces {
        for c in &t.collectives {
            let cells = vec![
                c.collective.as_str().into(),
                c.process_group.as_str().into(),
                c.process_group_desc.as_str().into(),
                c.algorithm.clone().into(),
                c.dtype.as_str().into(),
                c.group_size.into(),
                c.count.into(),
                c.on_gpu.into(),
                c.bytes.into(),
                us_cell(c.latency_ns as f64),
                us_cell(c.mean_latency_ns),
                c.algbw_gbps.into(),
                c.busbw_gbps.into(),
            ];
            s.push(row(&t.path, t.rank, cells));
        }
    }
    s
}

/// `findings`: every finding of the report, ranked as the report ranks them.
fn findings(doc: &WorkbookDocument) -> Sheet {
    let mut s = Sheet::new(
        "findings",
        columns(&[
            ("id", Kind::Text),
            ("rule", Kind::Text),
            ("severity", Kind::Text),
            ("title", Kind::Lines),
            ("impact_us_per_step", Kind::Us),
            ("impact_share", Kind::Share),
            ("steps", Kind::Count),
            ("of_steps", Kind::Count),
            ("ranks", Kind::Count),
            ("of_ranks", Kind::Count),
            ("evidence", Kind::Lines),
            ("fix", Kind::Lines),
            ("details", Kind::Lines),
        ]),
    );
    for f in &doc.report.findings {
        let cells = vec![
            f.id.as_str().into(),
            f.rule.as_str().into(),
            f.severity.as_str().into(),
            f.title.as_str().into(),
            us_cell(f.impact_ns_per_step),
            f.impact_share.into(),
            f.confidence.steps.into(),
            f.confidence.of_steps.into(),
            f.confidence.ranks.into(),
            f.confidence.of_ranks.into(),
            f.evidence.join("\n").into(),
            f.fix.as_str().into(),
            f.details.as_str().into(),
        ];
        s.push(row(&f.trace, f.rank, cells));
    }
    s
}
