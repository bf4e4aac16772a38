//! `memory`: what a file or folder says about memory. A file whose content is a pickle
//! is a CUDA memory snapshot, one that is a profiler memory timeline is read as one;
//! anything else is traces, each reduced to its memory view on the thread that read it,
//! paired with PyTorch's memory timeline when one belongs to it, and, for a run folder,
//! each phase's trace peak, snapshot and timeline side by side.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use kinetoscope_analysis::memory::snapshot::{analyze_snapshot, SnapshotOptions};
use kinetoscope_analysis::memory::timeline::attach_comparison;
use kinetoscope_analysis::memory::{analyze_trace, sort, MemoryView, SortKey};
use kinetoscope_trace::read::{
    is_memory_timeline_file, is_snapshot_file, read_snapshot, ArtifactKind, RunPhase,
};
use serde::{Deserialize, Serialize};

use crate::artifacts::timeline_view;
use crate::document::{
    Document, InputLayout, MemoryFileKind, SnapshotDocument, TimelineDocument, SCHEMA_VERSION,
};
use crate::error::{EngineError, EngineResult};
use crate::input::{split_results, Source};
use crate::run_folder::phase_memory;
use crate::views::ensure_any_read;
use crate::Engine;

/// Options of the memory view.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MemoryOptions {
    /// Most curve points per device after down-sampling (at least 10).
    #[serde(skip)]
    pub points: usize,
    /// Keep only matching devices.
    #[serde(skip)]
    pub device: Option<kinetoscope_analysis::memory::DeviceFilter>,
    /// The sort key applied to the tables (`None`: the defaults).
    pub sort: Option<SortKey>,
    /// Rows kept per table (0 = all).
    pub top: usize,
    /// The memory timeline to compare a single trace with (else one found beside it).
    #[serde(skip)]
    pub timeline: Option<PathBuf>,
}

/// The memory view of traces: one [`MemoryView`] per trace.
pub type MemoryDocument = Document<MemoryView, MemoryOptions>;

/// What `memory` found, by the content of its input.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MemoryResult {
    /// Traces (a file, rank folder or run folder).
    Traces(MemoryDocument),
    /// A CUDA caching-allocator snapshot.
    Snapshot(SnapshotDocument),
    /// A profiler memory timeline.
    Timeline(TimelineDocument),
}

impl Engine {
    /// `memory`: the snapshot, timeline or trace view of `src`, by content.
    pub fn memory(&self, src: &Source, opts: &MemoryOptions) -> EngineResult<MemoryResult> {
        if let Some(path) = src.path().filter(|p| p.is_file()) {
            if is_snapshot_file(path) {
                return Ok(MemoryResult::Snapshot(self.memory_snapshot(path, opts)?));
            }
            if is_memory_timeline_file(path) {
                return Ok(MemoryResult::Timeline(TimelineDocument {
                    schema_version: SCHEMA_VERSION,
                    kind: MemoryFileKind::MemoryTimeline,
                    view: timeline_view(path, opts.points)?,
                }));
            }
        }
        Ok(MemoryResult::Traces(self.memory_traces(src, opts)?))
    }

    /// A CUDA caching-allocator snapshot.
    fn memory_snapshot(&self, path: &Path, opts: &MemoryOptions) -> EngineResult<SnapshotDocument> {
        let snap = read_snapshot(path)?;
        let view = analyze_snapshot(
            &snap,
            &SnapshotOptions {
                top: opts.top,
                points: opts.points,
                device: opts.device,
            },
        );
        Ok(SnapshotDocument {
            schema_version: SCHEMA_VERSION,
            kind: MemoryFileKind::MemorySnapshot,
            input: path.display().to_string(),
            snapshot: view,
        })
    }

    /// The memory views of every trace of `src`, compared with their timelines, sorted
    /// and cut.
    fn memory_traces(&self, src: &Source, opts: &MemoryOptions) -> EngineResult<MemoryDocument> {
        let analysis = kinetoscope_analysis::memory::MemoryOptions {
            points: opts.points,
            device: opts.device,
        };
        let mapped = self.map_any(src, |t| analyze_trace(t, &analysis))?;
        let results = ensure_any_read(mapped.results)?;
        let mut doc = Document::with_options(src.name(), mapped.layout, opts.clone());
        let mut peaks = HashMap::new();
        doc.errors = split_results(results, |path, v: MemoryView| {
            let peak = v
                .devices
                .iter()
                .filter_map(|d| Some((d.peak_allocated.as_ref()?.bytes, d.device.clone())))
                .max_by_key(|(b, _)| *b);
            peaks.insert(path, peak);
            doc.traces.push(v);
        });
        if let InputLayout::RunFolder { phases } = &doc.layout {
            doc.phase_memory = phase_memory(phases, &peaks);
        }
        compare_with_timelines(&mut doc, opts)?;
        for v in &mut doc.traces {
            sort::sort_and_limit(v, opts.sort, opts.top);
        }
        Ok(doc)
    }
}

/// The memory-timeline file for a trace: the explicit one, else the one timeline file
/// beside the trace (by content), if exactly one.
fn timeline_for(trace: &Path, explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_owned());
    }
    let dir = trace.parent()?;
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_ascii_lowercase();
        if p.is_file()
            && (name.ends_with(".json") || name.ends_with(".json.gz") || name.ends_with(".gz"))
            && is_memory_timeline_file(&p)
        {
            found.push(p);
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// Each trace of a run folder paired with its phase's memory timeline.
fn phase_timelines(phases: &[RunPhase]) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    for ph in phases {
        let tl = ph
            .artifacts
            .iter()
            .find(|a| a.kind == ArtifactKind::MemoryTimeline && is_memory_timeline_file(&a.path));
        let Some(tl) = tl else { continue };
        for a in ph
            .artifacts
            .iter()
            .filter(|a| a.kind == ArtifactKind::Trace)
        {
            pairs.push((a.path.clone(), tl.path.clone()));
        }
    }
    pairs
}

/// The time span of a view's memory records (epoch ns), if any.
fn records_span(v: &MemoryView) -> Option<(i64, i64)> {
    v.devices
        .iter()
        .filter_map(|d| Some((d.curve.points.first()?.ts_ns, d.curve.points.last()?.ts_ns)))
        .reduce(|(a, b), (x, y)| (a.min(x), b.max(y)))
}

/// Attach PyTorch's timeline categories next to the inferred ones. An explicit timeline
/// that cannot be read is an error; a timeline found beside a trace is used only when
/// its peak falls inside the trace's memory records (the same run).
fn compare_with_timelines(doc: &mut MemoryDocument, opts: &MemoryOptions) -> EngineResult<()> {
    let explicit = opts.timeline.as_deref();
    let pairs = match &doc.layout {
        InputLayout::RunFolder { phases } => phase_timelines(phases),
        _ => Vec::new(),
    };
    let single = matches!(doc.layout, InputLayout::File);
    for v in &mut doc.traces {
        let trace = PathBuf::from(&v.path);
        let tl_path = if single {
            timeline_for(&trace, explicit)
        } else {
            pairs
                .iter()
                .find(|(t, _)| *t == trace)
                .map(|(_, tl)| tl.clone())
        };
        let Some(tl_path) = tl_path else { continue };
        let tl = match timeline_view(&tl_path, opts.points) {
            Ok(tl) => tl,
            Err(e) if explicit.is_some() => {
                return Err(EngineError::Option(format!(
                    "--timeline {}: {e}",
                    tl_path.display()
                )))
            }
            Err(_) => continue,
        };
        if !attach_comparison(v, &tl) {
            continue;
        }
        if explicit.is_none() {
            let peak_ts = v
                .timeline_comparison
                .as_ref()
                .map(|c| c.timeline_peak.ts_ns);
            let inside = match (records_span(v), peak_ts) {
                (Some((a, b)), Some(ts)) => (a..=b).contains(&ts),
                _ => false,
            };
            if !inside {
                v.timeline_comparison = None;
                continue;
            }
        }
        v.notes.push(format!(
            "categories compared with PyTorch's memory timeline {}",
            tl_path.display()
        ));
    }
    Ok(())
}
