//! Reading the artifacts that are not Kineto traces: profiler memory timelines (and,
//! through `kinetoscope-trace`, CUDA memory snapshots), analysed for the memory views.

use std::path::Path;

use kinetoscope_analysis::memory::timeline::{analyze_timeline, TimelineView};
use kinetoscope_trace::read::read_memory_timeline;

use crate::error::EngineResult;

/// Read and analyse a memory-timeline file down-sampled to `points`.
pub fn timeline_view(path: &Path, points: usize) -> EngineResult<TimelineView> {
    let tl = read_memory_timeline(path)?;
    Ok(analyze_timeline(&path.display().to_string(), &tl, points))
}
