//! Run folders: each phase's trace peak, CUDA memory snapshot and memory timeline side
//! by side ([`PhaseMemory`]), and the run-level view of `report` ([`RunReport`]): the
//! phases side by side with their time, peak memory, top operators and the findings that
//! matter, built from the per-phase results.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kinetoscope_advisor::summary::Phases;
use kinetoscope_advisor::{Finding, Severity, TraceReport};
use kinetoscope_analysis::memory::snapshot::{analyze_snapshot, SnapshotOptions};
use kinetoscope_analysis::ops::{analyze_ops, OpGroupBy, OpSortKey};
use kinetoscope_trace::read::{sniff_path, ContentKind, ReadOptions};
use kinetoscope_trace::{ArtifactKind, RunPhase, Trace};
use serde::{Deserialize, Serialize};

use crate::artifacts::timeline_view;

/// What one artifact of a phase says about memory.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ArtifactMemory {
    /// The file.
    pub path: String,
    /// What it is (`None` when unknown).
    pub kind: Option<ArtifactKind>,
    /// Trace: the highest allocated bytes over its devices. Snapshot: the peak of active
    /// bytes replayed from its allocator trace. Timeline: the peak total over categories.
    pub peak_bytes: Option<i64>,
    /// The device of the trace peak (`GPU0`, `CPU`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_device: Option<String>,
    /// Snapshot: bytes reserved by the allocator at snapshot time (all devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved_bytes: Option<u64>,
    /// Snapshot: bytes allocated (active blocks) at snapshot time (all devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocated_bytes: Option<u64>,
    /// Timeline: the largest category at the peak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_category: Option<String>,
    /// Timeline: the bytes of the largest category at the peak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_category_bytes: Option<i64>,
    /// Why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The memory artifacts of one phase.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhaseMemory {
    /// Stage number.
    pub stage: u32,
    /// Phase name.
    pub phase: String,
    /// Its readable artifacts, in file order.
    pub artifacts: Vec<ArtifactMemory>,
}

/// A trace's memory peak: bytes and device.
pub type TracePeak = Option<(i64, String)>;

/// Snapshot: reserved and allocated at snapshot time, peak active from its history.
fn snapshot_row(a: &mut ArtifactMemory, path: &Path, read: &ReadOptions) {
    match sniff_path(path).and_then(|s| s.read_snapshot(read)) {
        Ok(snap) => {
            let v = analyze_snapshot(
                &snap,
                &SnapshotOptions {
                    top: 1,
                    points: 10,
                    device: None,
                },
            );
            a.reserved_bytes = Some(v.devices.iter().map(|d| d.state.reserved_bytes).sum());
            a.allocated_bytes = Some(v.devices.iter().map(|d| d.state.allocated_bytes).sum());
            a.peak_bytes = v
                .devices
                .iter()
                .filter_map(|d| d.history.as_ref().map(|h| h.peak_active_bytes as i64))
                .max();
        }
        Err(e) => a.error = Some(e.to_string()),
    }
}

/// Timeline: the peak total and the largest category there.
fn timeline_row(a: &mut ArtifactMemory, path: &Path, read: &ReadOptions) {
    let tl = match sniff_path(path) {
        Ok(s) if s.kind() == ContentKind::MemoryTimeline => s.read_memory_timeline(read),
        Ok(_) => {
            a.error = Some("not a memory timeline (by content)".to_owned());
            return;
        }
        Err(e) => Err(e),
    };
    match tl {
        Ok(tl) => {
            let v = timeline_view(path, &tl, 10);
            if let Some(p) = &v.series.peak {
                a.peak_bytes = Some(p.total_bytes);
                if let Some((k, b)) = p
                    .by_category
                    .iter()
                    .enumerate()
                    .max_by_key(|(k, b)| (**b, std::cmp::Reverse(*k)))
                {
                    a.top_category = Some(v.series.categories[k].clone());
                    a.top_category_bytes = Some(*b);
                }
            }
        }
        Err(e) => a.error = Some(e.to_string()),
    }
}

/// One row per readable artifact of each phase. `trace_peaks` gives each trace's peak
/// (by path); traces missing from it are left out (the caller did not read them).
/// Snapshots and timelines are read with `read` (its memory budget).
pub fn phase_memory(
    phases: &[RunPhase],
    trace_peaks: &HashMap<PathBuf, TracePeak>,
    read: &ReadOptions,
) -> Vec<PhaseMemory> {
    phases
        .iter()
        .map(|p| PhaseMemory {
            stage: p.stage,
            phase: p.phase.clone(),
            artifacts: p
                .artifacts
                .iter()
                .filter_map(|art| {
                    let mut a = ArtifactMemory {
                        path: art.path.display().to_string(),
                        kind: Some(art.kind),
                        ..ArtifactMemory::default()
                    };
                    match art.kind {
                        ArtifactKind::Trace => {
                            let peak = trace_peaks.get(&art.path)?;
                            if let Some((b, d)) = peak {
                                a.peak_bytes = Some(*b);
                                a.peak_device = Some(d.clone());
                            }
                        }
                        ArtifactKind::MemorySnapshot => snapshot_row(&mut a, &art.path, read),
                        ArtifactKind::MemoryTimeline => timeline_row(&mut a, &art.path, read),
                        // Listed, with nothing read: PyTorch's HTML export is a picture.
                        ArtifactKind::MemoryTimelineHtml => {}
                        _ => return None,
                    }
                    Some(a)
                })
                .collect(),
        })
        .collect()
}

/// Operators kept per phase in [`PhaseReport::top_ops`].
pub const TOP_OPS: usize = 3;

/// Findings kept per phase in [`PhaseReport::findings`].
pub const TOP_FINDINGS: usize = 3;

/// One operator of a phase's top list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseOp {
    /// Operator name.
    pub name: String,
    /// Calls.
    pub calls: u64,
    /// Self time (device self time when the trace has GPU work, else host self time),
    /// ns.
    pub self_ns: i64,
}

/// The top operators of one trace by self time: device self time when it has GPU work,
/// else host self time (the operator view's defaults). Computed on the thread that read
/// the trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopOps {
    /// The time they are ranked by.
    pub by: OpSortKey,
    /// The operators, longest first.
    pub ops: Vec<PhaseOp>,
}

impl TopOps {
    /// The [`TOP_OPS`] operators of `trace` with the most self time.
    pub fn of(trace: &Trace) -> Self {
        let mut table = analyze_ops(trace, OpGroupBy::Name);
        let by = if table.has_device_work {
            OpSortKey::DeviceSelf
        } else {
            OpSortKey::HostSelf
        };
        table.sort_by(by);
        table.truncate(TOP_OPS);
        Self {
            by,
            ops: table
                .rows
                .into_iter()
                .map(|r| PhaseOp {
                    self_ns: if by == OpSortKey::DeviceSelf {
                        r.device_self_ns
                    } else {
                        r.host_self_ns
                    },
                    name: r.name,
                    calls: r.calls,
                })
                .collect(),
        }
    }
}

/// A finding of a phase, as the run view lists it (the full finding is in the phase's
/// trace report, matched by `subject`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseFinding {
    /// Rule code.
    pub id: String,
    /// Rule name.
    pub rule: String,
    /// The finding's subject (its key in the trace report).
    pub subject: String,
    /// Severity.
    pub severity: Severity,
    /// Title.
    pub title: String,
    /// Estimated recoverable time per step, ns.
    pub impact_ns_per_step: f64,
    /// That as a share of the step (0–1).
    pub impact_share: f64,
}

/// The memory peak of a phase: the largest over its artifacts, and which one says so.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhasePeak {
    /// Bytes: the trace's peak allocated, the snapshot's peak active (replayed), or the
    /// memory timeline's peak total.
    pub bytes: i64,
    /// The artifact kind it comes from.
    pub source: ArtifactKind,
    /// The device, when the source says (`GPU0`, `CPU`).
    pub device: Option<String>,
}

/// One phase of a run folder, side by side with the others.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseReport {
    /// Stage number.
    pub stage: u32,
    /// Phase name.
    pub phase: String,
    /// The phase's trace (its first, when it has several); `None` without one.
    pub trace: Option<String>,
    /// Kept steps of that trace (a phase profiled as one step has 1).
    pub steps: usize,
    /// Profiled time: Σ of its steps (the whole trace when it has no `ProfilerStep#`),
    /// ns.
    pub time_ns: Option<f64>,
    /// `time_ns` over the run's profiled time (0–1).
    pub time_share: Option<f64>,
    /// Host phases of the trace per step (forward, backward, ...).
    pub phases: Option<Phases>,
    /// Host time in collectives per step, ns.
    pub communication_ns: f64,
    /// The highest memory over the phase's artifacts.
    pub peak_memory: Option<PhasePeak>,
    /// Top operators by self time.
    pub top_ops: Option<TopOps>,
    /// The findings that matter: warning or critical, or with an estimated impact; at
    /// most [`TOP_FINDINGS`], in the report's rank order.
    pub findings: Vec<PhaseFinding>,
    /// All findings of the phase's trace.
    pub findings_total: usize,
}

/// `report RUN_FOLDER`: the run's phases side by side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// Σ of the phases' profiled time, ns.
    pub time_ns: f64,
    /// One row per phase, in stage order.
    pub phases: Vec<PhaseReport>,
}

/// Whether a finding matters in the run view: warning or critical, or with an estimated
/// impact.
fn matters(f: &Finding) -> bool {
    f.severity >= Severity::Warning || f.impact_ns_per_step > 0.0
}

/// The run view from each trace's report and top operators (by path) and each phase's
/// memory artifacts.
pub fn run_report(
    phases: &[RunPhase],
    traces: &HashMap<String, (&TraceReport, &TopOps)>,
    memory: &[PhaseMemory],
) -> RunReport {
    let mut rows: Vec<PhaseReport> = phases
        .iter()
        .map(|p| {
            let trace = p
                .artifacts
                .iter()
                .filter(|a| a.kind == ArtifactKind::Trace)
                .map(|a| a.path.display().to_string())
                .find(|path| traces.contains_key(path));
            let found = trace.as_ref().map(|t| traces[t]);
            let report = found.map(|(r, _)| r);
            let peak_memory = memory
                .iter()
                .filter(|m| m.stage == p.stage && m.phase == p.phase)
                .flat_map(|m| &m.artifacts)
                .filter_map(|a| {
                    Some(PhasePeak {
                        bytes: a.peak_bytes?,
                        source: a.kind?,
                        device: a.peak_device.clone(),
                    })
                })
                .max_by_key(|x| x.bytes);
            PhaseReport {
                stage: p.stage,
                phase: p.phase.clone(),
                trace,
                steps: report.map_or(0, |r| r.summary.steps),
                time_ns: report
                    .and_then(|r| r.summary.step_stats.as_ref())
                    .map(|s| s.mean_ns * s.count as f64),
                time_share: None,
                phases: report.map(|r| r.summary.phases.clone()),
                communication_ns: report.map_or(0.0, |r| r.summary.communication_ns),
                peak_memory,
                top_ops: found.map(|(_, t)| t.clone()),
                findings: report
                    .map(|r| {
                        r.findings
                            .iter()
                            .filter(|f| matters(f))
                            .take(TOP_FINDINGS)
                            .map(|f| PhaseFinding {
                                id: f.id.clone(),
                                rule: f.rule.clone(),
                                subject: f.subject.clone(),
                                severity: f.severity,
                                title: f.title.clone(),
                                impact_ns_per_step: f.impact_ns_per_step,
                                impact_share: f.impact_share,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                findings_total: report.map_or(0, |r| r.findings.len()),
            }
        })
        .collect();
    let time_ns: f64 = rows.iter().filter_map(|r| r.time_ns).sum();
    for r in &mut rows {
        r.time_share = r.time_ns.filter(|_| time_ns > 0.0).map(|t| t / time_ns);
    }
    RunReport {
        time_ns,
        phases: rows,
    }
}
