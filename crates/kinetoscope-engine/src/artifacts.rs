//! Reading the artifacts that are not Kineto traces: profiler memory timelines (and,
//! through `kinetoscope-trace`, CUDA memory snapshots), analysed for the memory views.

use std::path::Path;

use kinetoscope_analysis::memory::timeline::{analyze_timeline, TimelineView};
use kinetoscope_trace::read::{sniff_path, ContentKind, ReadOptions};
use kinetoscope_trace::MemoryTimeline;

use crate::error::EngineResult;

/// The view of a memory timeline read from `path`, down-sampled to about `points`.
pub fn timeline_view(path: &Path, tl: &MemoryTimeline, points: usize) -> TimelineView {
    analyze_timeline(&path.display().to_string(), tl, points)
}

/// Read `path` as a memory timeline if its content is one (`None` otherwise), opening
/// and sniffing it once; its rows are charged to `read`'s memory budget.
pub fn read_timeline_if_any(
    path: &Path,
    read: &ReadOptions,
) -> EngineResult<Option<MemoryTimeline>> {
    let sniffed = sniff_path(path)?;
    if sniffed.kind() != ContentKind::MemoryTimeline {
        return Ok(None);
    }
    Ok(Some(sniffed.read_memory_timeline(read)?))
}

/// Read `path` as a memory timeline; another kind of file is an error saying what it is.
pub fn read_timeline(path: &Path, read: &ReadOptions) -> EngineResult<MemoryTimeline> {
    let sniffed = sniff_path(path)?;
    Ok(sniffed.read_memory_timeline(read)?)
}
