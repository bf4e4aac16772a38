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
use kinetoscope_analysis::note::Note;
use kinetoscope_trace::read::{sniff_path, ContentKind, ReadOptions, Sniffed};
use kinetoscope_trace::{ArtifactKind, MemoryTimeline, RunPhase};
use serde::{Deserialize, Serialize};

use crate::artifacts::{read_timeline, read_timeline_if_any, timeline_view};
use crate::document::{
    Document, InputLayout, MemoryFileKind, SnapshotDocument, TimelineDocument, SCHEMA_VERSION,
};
use crate::error::{EngineError, EngineResult};
use crate::input::{map_sniffed, may_be_timeline, split_results, Source};
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
        // A file is opened and sniffed once; what it is decides the view.
        if let Some(path) = src.path().filter(|p| !p.is_dir()) {
            let sniffed = sniff_path(path)?;
            return Ok(match sniffed.kind() {
                ContentKind::Snapshot => {
                    MemoryResult::Snapshot(self.memory_snapshot(sniffed, opts)?)
                }
                ContentKind::MemoryTimeline => {
                    let tl = sniffed.read_memory_timeline(&self.read)?;
                    MemoryResult::Timeline(TimelineDocument {
                        schema_version: SCHEMA_VERSION,
                        kind: MemoryFileKind::MemoryTimeline,
                        view: timeline_view(path, &tl, opts.points),
                    })
                }
                // A session reads traces through its cache.
                _ if self.cache.is_some() => {
                    MemoryResult::Traces(self.memory_traces(src, None, opts)?)
                }
                _ => MemoryResult::Traces(self.memory_traces(src, Some(sniffed), opts)?),
            });
        }
        Ok(MemoryResult::Traces(self.memory_traces(src, None, opts)?))
    }

    /// A CUDA caching-allocator snapshot.
    fn memory_snapshot(
        &self,
        sniffed: Sniffed<'_>,
        opts: &MemoryOptions,
    ) -> EngineResult<SnapshotDocument> {
        let input = sniffed.path().display().to_string();
        let snap = sniffed.read_snapshot(&self.read)?;
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
            input,
            snapshot: view,
        })
    }

    /// The memory views of every trace of `src` (one file already sniffed, or a
    /// folder), compared with their timelines, sorted and cut.
    fn memory_traces(
        &self,
        src: &Source,
        sniffed: Option<Sniffed<'_>>,
        opts: &MemoryOptions,
    ) -> EngineResult<MemoryDocument> {
        let analysis = kinetoscope_analysis::memory::MemoryOptions {
            points: opts.points,
            device: opts.device,
        };
        let reduce = |t: &kinetoscope_trace::Trace| analyze_trace(t, &analysis);
        let mapped = match sniffed {
            Some(s) => crate::views::Mapped {
                layout: InputLayout::File,
                results: vec![map_sniffed(s, &self.read, reduce)],
                skipped: Vec::new(),
            },
            None => self.map_any(src, reduce)?,
        };
        let results = ensure_any_read(mapped.results)?;
        let mut doc = Document::with_options(src.name(), mapped.layout, opts.clone());
        doc.skipped = mapped.skipped;
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
            doc.phase_memory = phase_memory(phases, &peaks, &self.read);
        }
        compare_with_timelines(&mut doc, opts, &self.read)?;
        for v in &mut doc.traces {
            sort::sort_and_limit(v, opts.sort, opts.top);
        }
        Ok(doc)
    }
}

/// The memory timeline for a single trace: the explicit one (an error if it cannot be
/// read), else the one timeline file beside the trace (by content), if exactly one.
fn timeline_for(
    trace: &Path,
    explicit: Option<&Path>,
    read: &ReadOptions,
) -> EngineResult<Option<(PathBuf, MemoryTimeline)>> {
    if let Some(p) = explicit {
        let tl = read_timeline(p, read)
            .map_err(|e| EngineError::Option(format!("--timeline {}: {e}", p.display())))?;
        return Ok(Some((p.to_owned(), tl)));
    }
    Ok(timeline_beside(trace, read))
}

/// The one memory-timeline file in the trace's folder, read, if exactly one.
fn timeline_beside(trace: &Path, read: &ReadOptions) -> Option<(PathBuf, MemoryTimeline)> {
    let dir = trace.parent()?;
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_file() && may_be_timeline(&e.file_name().to_string_lossy()) && p != trace {
            if let Ok(Some(tl)) = read_timeline_if_any(&p, read) {
                found.push((p, tl));
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// Each trace of a run folder paired with its phase's memory timeline.
fn phase_timelines(phases: &[RunPhase]) -> Vec<(PathBuf, PathBuf)> {
    let mut pairs = Vec::new();
    for ph in phases {
        // Named as a timeline; read (and checked by content) when compared.
        let tl = ph
            .artifacts
            .iter()
            .find(|a| a.kind == ArtifactKind::MemoryTimeline);
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
fn compare_with_timelines(
    doc: &mut MemoryDocument,
    opts: &MemoryOptions,
    read: &ReadOptions,
) -> EngineResult<()> {
    let explicit = opts.timeline.as_deref();
    let pairs = match &doc.layout {
        InputLayout::RunFolder { phases } => phase_timelines(phases),
        _ => Vec::new(),
    };
    let single = matches!(doc.layout, InputLayout::File);
    for v in &mut doc.traces {
        let trace = PathBuf::from(&v.path);
        let found = if single {
            timeline_for(&trace, explicit, read)?
        } else {
            let named = pairs.iter().find(|(t, _)| *t == trace).map(|(_, tl)| tl);
            match named
                .map(|p| read_timeline_if_any(p, read).map(|tl| tl.map(|tl| (p.clone(), tl))))
            {
                Some(Ok(found)) => found,
                _ => None,
            }
        };
        let Some((tl_path, timeline)) = found else {
            continue;
        };
        let tl = timeline_view(&tl_path, &timeline, opts.points);
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
        v.notes.push(Note::ComparedWithTimeline {
            path: tl_path.display().to_string(),
        });
    }
    Ok(())
}
