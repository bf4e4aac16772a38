//! Run folders: each phase's trace peak, CUDA memory snapshot and memory timeline side
//! by side ([`PhaseMemory`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kinetoscope_analysis::memory::snapshot::{analyze_snapshot, SnapshotOptions};
use kinetoscope_trace::read::{read_snapshot, sniff_path, ContentKind};
use kinetoscope_trace::{ArtifactKind, RunPhase};
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
fn snapshot_row(a: &mut ArtifactMemory, path: &Path) {
    match read_snapshot(path) {
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
fn timeline_row(a: &mut ArtifactMemory, path: &Path) {
    let tl = match sniff_path(path) {
        Ok(s) if s.kind() == ContentKind::MemoryTimeline => s.read_memory_timeline(),
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
pub fn phase_memory(
    phases: &[RunPhase],
    trace_peaks: &HashMap<PathBuf, TracePeak>,
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
                        ArtifactKind::MemorySnapshot => snapshot_row(&mut a, &art.path),
                        ArtifactKind::MemoryTimeline => timeline_row(&mut a, &art.path),
                        _ => return None,
                    }
                    Some(a)
                })
                .collect(),
        })
        .collect()
}
