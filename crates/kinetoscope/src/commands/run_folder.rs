//! Run folders: read each phase's CUDA memory snapshot and memory timeline (and take
//! each trace's peak from its memory view, when the caller has one) into
//! [`PhaseMemory`] rows.

use std::collections::HashMap;

use kinetoscope_analysis::memory::snapshot::{analyze_snapshot, SnapshotOptions};
use kinetoscope_report::run_folder::{ArtifactMemory, PhaseMemory};
use kinetoscope_trace::read::{read_snapshot, sniff_path, ContentKind};
use kinetoscope_trace::{ArtifactKind, RunPhase};

/// A trace's peak: bytes and device.
pub type TracePeak = Option<(i64, String)>;

/// Snapshot: reserved and allocated at snapshot time, peak active from its history.
fn snapshot_row(a: &mut ArtifactMemory, path: &std::path::Path) {
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

fn timeline_row(a: &mut ArtifactMemory, path: &std::path::Path) {
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
            let v = super::memory_timeline::view(path, &tl, 10);
            if let Some(p) = &v.series.peak {
                a.peak_bytes = Some(p.total_bytes);
                a.top_category = p
                    .by_category
                    .iter()
                    .enumerate()
                    .max_by_key(|(k, b)| (**b, std::cmp::Reverse(*k)))
                    .map(|(k, b)| (v.series.categories[k].clone(), *b));
            }
        }
        Err(e) => a.error = Some(e.to_string()),
    }
}

/// One row per readable artifact of each phase. `trace_peaks` gives each trace's peak
/// (by path); traces missing from it are left out (the caller did not read them).
pub fn phase_memory(
    phases: &[RunPhase],
    trace_peaks: &HashMap<std::path::PathBuf, TracePeak>,
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
