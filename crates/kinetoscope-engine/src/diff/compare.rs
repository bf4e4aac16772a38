//! Two `report` documents compared section by section: the cross-trace part of
//! `kinetoscope diff` (how the traces of a side combine, which trace of one side is
//! which of the other), on top of the pure comparisons of
//! `kinetoscope_analysis::diff`.

use std::collections::BTreeMap;
use std::path::Path;

use kinetoscope_advisor::TraceReport;
use kinetoscope_analysis::comm::names::is_comm_kernel;
use kinetoscope_analysis::diff::parts::PartDelta;
use kinetoscope_analysis::diff::steps::StepsDiff;
use kinetoscope_analysis::diff::{items, parts, uniform, Change, Combine, Side, TraceProfile};
use kinetoscope_analysis::stats::DurationStats;
use kinetoscope_trace::parse_stage_name;

use super::document::*;
use super::findings;
use super::gate::{evaluate, GateExpr};
use crate::document::{InputLayout, ReadFailure, ReportDocument, SCHEMA_VERSION};

/// What `kinetoscope diff` is asked besides the two inputs.
#[derive(Clone, Debug, Default)]
pub struct DiffOptions {
    /// `--fail-if` expressions.
    pub fail_if: Vec<GateExpr>,
    /// Samples per step (`--batch-size`), for throughput.
    pub batch_size: Option<f64>,
    /// Tokens per step (`--tokens-per-step`), for throughput.
    pub tokens_per_step: Option<f64>,
}

/// How the traces of a layout combine.
pub fn combine_of(layout: &InputLayout) -> Combine {
    match layout {
        InputLayout::File => Combine::Single,
        InputLayout::RankFolder | InputLayout::ParquetExport => Combine::Ranks,
        InputLayout::RunFolder { .. } => Combine::Sequence,
    }
}

/// A trace's place in its input, to pair traces across the runs: its rank in a rank
/// folder, its phase in a run folder, nothing for a single file.
fn place(t: &TraceReport, combine: Combine) -> String {
    match combine {
        Combine::Single => String::new(),
        Combine::Ranks => match t.rank {
            Some(r) => format!("rank {r}"),
            None => file_name(&t.path),
        },
        Combine::Sequence => {
            let name = file_name(&t.path);
            parse_stage_name(&name).map_or(name, |(_, phase)| phase)
        }
    }
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or_else(|| path.to_owned(), |n| n.to_string_lossy().into_owned())
}

/// `device` prefixed with its trace's place when the side has several traces.
fn device_label(place: &str, device: &str) -> String {
    if place.is_empty() {
        device.to_owned()
    } else {
        format!("{place} {device}")
    }
}

/// Compare two report documents.
pub fn compare(
    base: &ReportDocument,
    new: &ReportDocument,
    sides: (SideInfo, SideInfo),
    opts: &DiffOptions,
) -> DiffDocument {
    let profiles = |d: &ReportDocument| -> Vec<TraceProfile> {
        d.traces
            .iter()
            .map(|t| t.profile.clone().unwrap_or_default())
            .collect()
    };
    let (bp, np) = (profiles(base), profiles(new));
    let (br, nr): (Vec<&TraceProfile>, Vec<&TraceProfile>) =
        (bp.iter().collect(), np.iter().collect());
    let b = Side {
        profiles: &br,
        combine: sides.0.combine,
    };
    let n = Side {
        profiles: &nr,
        combine: sides.1.combine,
    };

    let steps = StepsDiff::of(&b.step_times(), &n.step_times());
    let (mut ops, ops_matched) = items::ops(&b, &n);
    let (mut kernels, kernels_matched) = items::kernels(&b, &n);
    let change = uniform::detect(&ops, &kernels);
    uniform::explain(&mut ops, &change);
    uniform::explain(&mut kernels, &change);
    items::rank(&mut ops);
    items::rank(&mut kernels);
    let normalized = n.step_times_by(|s| change.normalise(&s.breakdown_ns));
    let machine = Machine {
        change,
        steps_normalized: StepsDiff::of(&b.step_times(), &normalized),
    };

    let mut doc = DiffDocument {
        schema_version: SCHEMA_VERSION,
        notes: notes(&steps, base, new, &sides),
        base: sides.0,
        new: sides.1,
        gpu: gpu(base, new, &steps, opts),
        memory: memory(base, new),
        communication: communication(base, new),
        phases: phases(base, new),
        breakdown: parts::breakdown(&b, &n),
        counts: counts(&b, &n),
        steps,
        machine,
        ops,
        kernels,
        matching: Matching {
            ops: ops_matched,
            kernels: kernels_matched,
        },
        findings: findings_of(base, new),
        gate: Default::default(),
        errors: errors(base, new),
        pstats: None,
    };
    doc.gate = evaluate(&doc, &opts.fail_if);
    doc
}

/// Deterministic counts per step, in the order of the gate's metrics.
fn counts(b: &Side, n: &Side) -> Vec<CountDelta> {
    type Get = fn(&TraceProfile) -> u64;
    let metrics: [(&str, Get); 8] = [
        ("kernels.launches", |p| p.counts.kernels),
        ("sync.calls", |p| p.counts.sync_calls),
        ("memcpy.calls", |p| p.counts.memcpy_calls),
        ("memcpy.bytes", |p| p.counts.memcpy_bytes),
        ("memset.calls", |p| p.counts.memset_calls),
        ("allocator.calls", |p| p.counts.allocator_calls),
        ("allocations", |p| p.counts.allocations),
        ("ops.calls", |p| p.counts.op_calls),
    ];
    metrics
        .iter()
        .map(|(metric, get)| CountDelta {
            metric: (*metric).to_owned(),
            value: Change::of(
                Some(b.per_step(|p| get(p) as f64)),
                Some(n.per_step(|p| get(p) as f64)),
            ),
        })
        .collect()
}

/// One value per side from the traces' reports: the mean over ranks, the sum over
/// phases, `None` when no trace has it.
fn combined(d: &ReportDocument, f: impl Fn(&TraceReport) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = d.traces.iter().filter_map(f).collect();
    if v.is_empty() {
        return None;
    }
    let sum: f64 = v.iter().sum();
    Some(match combine_of(&d.layout) {
        Combine::Sequence => sum,
        _ => sum / v.len() as f64,
    })
}

/// Host phases per step, ranked by |Δ|.
fn phases(base: &ReportDocument, new: &ReportDocument) -> Vec<PartDelta> {
    type Get = fn(&TraceReport) -> Option<f64>;
    let all: [(&str, Get); 4] = [
        ("dataloader", |t| t.summary.phases.dataloader_ns),
        ("forward", |t| t.summary.phases.forward_ns),
        ("backward", |t| t.summary.phases.backward_ns),
        ("optimizer", |t| t.summary.phases.optimizer_ns),
    ];
    let mut rows: Vec<PartDelta> = all
        .iter()
        .filter_map(|(name, get)| {
            let (b, n) = (combined(base, get), combined(new, get));
            (b.is_some() || n.is_some()).then(|| PartDelta::of(name, b, n))
        })
        .collect();
    parts::rank(&mut rows);
    rows
}

/// Values keyed by device label, for both sides, in first-seen order. When no label is
/// on both sides and the sides have as many, they are paired in order and labelled
/// `base / new` (one trace of rank 3 against one of rank 1: `GPU3 / GPU1`).
fn paired<T: Copy>(
    base: Vec<(String, T)>,
    new: Vec<(String, T)>,
) -> Vec<(String, Option<T>, Option<T>)> {
    let disjoint = base.iter().all(|(k, _)| new.iter().all(|(j, _)| j != k));
    if disjoint && !base.is_empty() && base.len() == new.len() {
        return base
            .into_iter()
            .zip(new)
            .map(|((bk, b), (nk, n))| (format!("{bk} / {nk}"), Some(b), Some(n)))
            .collect();
    }
    let mut order: Vec<String> = Vec::new();
    let mut map: BTreeMap<String, (Option<T>, Option<T>)> = BTreeMap::new();
    for (k, v) in base {
        order.push(k.clone());
        map.entry(k).or_default().0 = Some(v);
    }
    for (k, v) in new {
        if !map.contains_key(&k) {
            order.push(k.clone());
        }
        map.entry(k).or_default().1 = Some(v);
    }
    order
        .into_iter()
        .map(|k| {
            let (b, n) = map[&k];
            (k, b, n)
        })
        .collect()
}

/// GPU metrics per device, MFU and throughput.
fn gpu(
    base: &ReportDocument,
    new: &ReportDocument,
    steps: &StepsDiff,
    opts: &DiffOptions,
) -> GpuSection {
    type Metrics = [Option<f64>; 4];
    let of = |d: &ReportDocument| -> Vec<(String, Metrics)> {
        let combine = combine_of(&d.layout);
        d.traces
            .iter()
            .flat_map(|t| {
                let place = place(t, combine);
                t.summary.gpus.iter().map(move |g| {
                    (
                        device_label(&place, &format!("GPU{}", g.id)),
                        [
                            g.utilization,
                            g.sm_efficiency,
                            g.achieved_occupancy,
                            g.tensor_core_ratio,
                        ],
                    )
                })
            })
            .collect()
    };
    let devices = paired(of(base), of(new))
        .into_iter()
        .map(|(device, b, n)| {
            let c =
                |i: usize| Change::of(b.and_then(|m: Metrics| m[i]), n.and_then(|m: Metrics| m[i]));
            GpuDelta {
                device,
                utilization: c(0),
                sm_efficiency: c(1),
                achieved_occupancy: c(2),
                tensor_core_ratio: c(3),
            }
        })
        .collect();
    let mfu = |d: &ReportDocument| d.traces.first().and_then(|t| t.flops.mfu);
    let throughput = throughput(base, new, (&steps.base, &steps.new), opts);
    GpuSection {
        devices,
        mfu: Change::of(mfu(base), mfu(new)),
        throughput,
    }
}

/// Throughput at each run's median step: for the items per step given, else for each
/// run's items from its input shapes (both runs must count the same unit).
fn throughput(
    base: &ReportDocument,
    new: &ReportDocument,
    (b_steps, n_steps): (&Option<DurationStats>, &Option<DurationStats>),
    opts: &DiffOptions,
) -> Option<Throughput> {
    let given = match (opts.tokens_per_step, opts.batch_size) {
        (Some(per_step), _) => Some((ThroughputUnit::Tokens, per_step)),
        (None, Some(per_step)) => Some((ThroughputUnit::Samples, per_step)),
        _ => None,
    };
    let (unit, b_items, n_items, source) = match given {
        Some((unit, n)) => (unit, n, n, ItemsSource::Given),
        None => {
            let (bu, b, source) = base.items_from_shapes()?;
            let (nu, n, _) = new.items_from_shapes()?;
            if bu != nu {
                return None;
            }
            (bu, b, n, source)
        }
    };
    let rate = |per_step: f64, s: &Option<DurationStats>| {
        s.as_ref()
            .map(|s| s.median_ns)
            .filter(|m| *m > 0.0)
            .map(|m| per_step / (m / 1e9))
    };
    Some(Throughput {
        unit,
        per_step: b_items,
        per_step_new: (n_items != b_items).then_some(n_items),
        source,
        value: Change::of(rate(b_items, b_steps), rate(n_items, n_steps)),
    })
}

/// One device's memory numbers.
#[derive(Clone, Copy)]
struct DeviceNumbers<'a> {
    peak: i64,
    reserved: i64,
    growth: Option<f64>,
    categories: &'a [kinetoscope_analysis::diff::profile::CategoryBytes],
}

/// Each device's memory numbers, labelled.
fn device_numbers(d: &ReportDocument) -> Vec<(String, DeviceNumbers<'_>)> {
    let combine = combine_of(&d.layout);
    d.traces
        .iter()
        .flat_map(|t| {
            let place = place(t, combine);
            t.summary.memory.iter().map(move |m| {
                let prof = t
                    .profile
                    .as_ref()
                    .and_then(|p| p.memory.iter().find(|d| d.device == m.device));
                (
                    device_label(&place, &m.device),
                    DeviceNumbers {
                        peak: m.peak_allocated_bytes,
                        reserved: m.peak_reserved_bytes,
                        growth: prof.and_then(|p| p.growth_per_step_bytes),
                        categories: prof.map_or(&[], |p| p.peak_by_category.as_slice()),
                    },
                )
            })
        })
        .collect()
}

/// Memory per device, and the largest growth.
fn memory(base: &ReportDocument, new: &ReportDocument) -> MemorySection {
    let (b, n) = (device_numbers(base), device_numbers(new));
    let devices: Vec<DeviceMemoryDelta> = paired(b, n)
        .into_iter()
        .map(|(device, b, n)| DeviceMemoryDelta {
            device,
            peak_bytes: Change::of(b.map(|x| x.peak), n.map(|x| x.peak)),
            reserved_bytes: Change::of(b.map(|x| x.reserved), n.map(|x| x.reserved)),
            growth_bytes_per_step: Change::of(b.and_then(|x| x.growth), n.and_then(|x| x.growth)),
            categories: categories(
                b.map_or(&[], |x| x.categories),
                n.map_or(&[], |x| x.categories),
            ),
        })
        .collect();
    let max = |f: fn(&Change<f64>) -> Option<f64>| {
        devices
            .iter()
            .filter_map(|d| f(&d.growth_bytes_per_step))
            .reduce(f64::max)
    };
    MemorySection {
        growth_bytes_per_step: Change::of(max(|c| c.base), max(|c| c.new)),
        devices,
    }
}

/// Categories at the peak, paired by name; those at 0 on both sides left out.
fn categories(
    b: &[kinetoscope_analysis::diff::profile::CategoryBytes],
    n: &[kinetoscope_analysis::diff::profile::CategoryBytes],
) -> Vec<CategoryDelta> {
    let pairs = paired(
        b.iter().map(|c| (c.category.clone(), c.bytes)).collect(),
        n.iter().map(|c| (c.category.clone(), c.bytes)).collect(),
    );
    pairs
        .into_iter()
        .filter(|(_, b, n)| b.unwrap_or(0) != 0 || n.unwrap_or(0) != 0)
        .map(|(category, b, n)| CategoryDelta {
            category,
            bytes: Change::of(b, n),
        })
        .collect()
}

/// Communication per step, per rank, and the straggler.
fn communication(base: &ReportDocument, new: &ReportDocument) -> CommSection {
    // Per rank: (rank, [median step, collective host time, exposed communication]).
    type RankValues = (i64, [Option<f64>; 3]);
    let per_rank = |d: &ReportDocument| -> Vec<(String, RankValues)> {
        if combine_of(&d.layout) != Combine::Ranks {
            return Vec::new();
        }
        d.traces
            .iter()
            .filter_map(|t| {
                let r = t.rank?;
                let median = t.summary.step_stats.as_ref().map(|s| s.median_ns);
                let exposed = t.profile.as_ref().map(exposed_per_step);
                let host = Some(t.summary.communication_ns);
                Some((r.to_string(), (r, [median, host, exposed])))
            })
            .collect()
    };
    let ranks = paired(per_rank(base), per_rank(new))
        .into_iter()
        .filter_map(|(_, b, n)| {
            let rank = b.or(n)?.0;
            let at = |i: usize| Change::of(b.and_then(|x| x.1[i]), n.and_then(|x| x.1[i]));
            Some(RankDelta {
                rank,
                step_median_ns: at(0),
                communication_ns: at(1),
                exposed_ns: at(2),
            })
        })
        .collect();
    let straggler = |d: &ReportDocument| {
        d.cross_rank_findings
            .iter()
            .find(|f| f.id == "DI001")
            .and_then(|f| f.rank)
    };
    let exposed = |d: &ReportDocument| combined(d, |t| t.profile.as_ref().map(exposed_per_step));
    let kernels =
        |d: &ReportDocument| combined(d, |t| t.profile.as_ref().map(comm_kernel_per_step));
    let overlap = |d: &ReportDocument| match (exposed(d), kernels(d)) {
        (Some(e), Some(k)) if k > 0.0 => Some((1.0 - e / k).clamp(0.0, 1.0)),
        _ => None,
    };
    CommSection {
        communication_ns: Change::of(
            combined(base, |t| Some(t.summary.communication_ns)),
            combined(new, |t| Some(t.summary.communication_ns)),
        ),
        exposed_ns: Change::of(exposed(base), exposed(new)),
        kernel_ns: Change::of(kernels(base), kernels(new)),
        overlap_share: Change::of(overlap(base), overlap(new)),
        ranks,
        straggler: Change::of(straggler(base), straggler(new)),
    }
}

/// Exposed communication per step: the breakdown's communication part (collective time
/// under which no computation kernel, copy or set ran).
fn exposed_per_step(p: &TraceProfile) -> f64 {
    let total: i64 = p
        .steps
        .iter()
        .map(|s| s.breakdown_ns.communication)
        .fold(0, i64::saturating_add);
    total as f64 / p.steps.len().max(1) as f64
}

/// Communication kernels' time per step.
fn comm_kernel_per_step(p: &TraceProfile) -> f64 {
    let total: f64 = p
        .kernels
        .iter()
        .filter(|k| is_comm_kernel(&k.name))
        .map(|k| k.total_ns as f64)
        .sum();
    total / p.steps.len().max(1) as f64
}

/// Findings of both runs matched by subject, rank and phase.
fn findings_of(base: &ReportDocument, new: &ReportDocument) -> FindingsSection {
    let places = |d: &ReportDocument| -> BTreeMap<String, String> {
        let combine = combine_of(&d.layout);
        d.traces
            .iter()
            .map(|t| {
                (
                    t.path.clone(),
                    if combine == Combine::Sequence {
                        place(t, combine)
                    } else {
                        String::new()
                    },
                )
            })
            .collect()
    };
    let (bp, np) = (places(base), places(new));
    let place_of = |f: &kinetoscope_advisor::Finding| {
        bp.get(&f.trace)
            .or_else(|| np.get(&f.trace))
            .cloned()
            .unwrap_or_default()
    };
    findings::compare(&base.findings, &new.findings, place_of)
}

/// What the reader of the comparison should know.
fn notes(
    steps: &StepsDiff,
    base: &ReportDocument,
    new: &ReportDocument,
    sides: &(SideInfo, SideInfo),
) -> Vec<DiffNote> {
    let mut notes = Vec::new();
    let count =
        |s: &Option<kinetoscope_analysis::stats::DurationStats>| s.as_ref().map_or(0, |s| s.count);
    if !steps.resolvable {
        notes.push(DiffNote::TooFewSteps {
            base: count(&steps.base),
            new: count(&steps.new),
        });
    }
    for (side, d) in [("base", base), ("new", new)] {
        if d.traces
            .iter()
            .any(|t| t.summary.step_source == kinetoscope_analysis::steps::StepSource::WholeTrace)
        {
            notes.push(DiffNote::NoStepMarkers {
                side: side.to_owned(),
            });
        }
    }
    if sides.0.traces != sides.1.traces {
        notes.push(DiffNote::TraceCountsDiffer {
            base: sides.0.traces,
            new: sides.1.traces,
        });
    }
    notes
}

/// Both sides' read failures, the side named before the path.
fn errors(base: &ReportDocument, new: &ReportDocument) -> Vec<ReadFailure> {
    let tag = |side: &str, d: &ReportDocument| -> Vec<ReadFailure> {
        d.errors
            .iter()
            .map(|e| ReadFailure {
                path: format!("{side}: {}", e.path),
                error: e.error.clone(),
            })
            .collect()
    };
    let mut all = tag("base", base);
    all.extend(tag("new", new));
    all
}
