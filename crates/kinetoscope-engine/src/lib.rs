//! The kinetoscope engine: the one pipeline under every front end (the CLI today; a
//! local server, diffs, the Python package and exporters next).
//!
//! It opens any input ([`Source`]: a file, a rank folder, a run folder, or bytes already
//! in memory), reads every trace in parallel, reduces each on the thread that read it,
//! makes every decision that needs more than one trace (HTA's step filter across ranks,
//! the rank comparison, pairing a trace with its memory timeline, run-folder memory),
//! and returns one [`document`] per view. Front ends only render documents.
//!
//! ```no_run
//! use kinetoscope_engine::{Engine, Source};
//! let engine = Engine::default();
//! let doc = engine.overview(&Source::Path("rank0.pt.trace.json.gz".into()))?;
//! println!("{} traces", doc.traces.len());
//! # Ok::<(), kinetoscope_engine::EngineError>(())
//! ```

pub mod artifacts;
pub mod diff;
pub mod document;
mod error;
pub mod input;
pub mod report_stream;
pub mod run_folder;
mod safe_json;
pub mod session;
pub mod throughput;
mod views;

use std::path::PathBuf;
use std::sync::Arc;

pub use diff::{DiffDocument, DiffOptions, GateExpr, PstatsDiffDocument};
pub use document::*;
pub use error::{EngineError, EngineResult};
pub use input::Source;
pub use kinetoscope_trace::read::{ProgressFn, ReadOptions};
pub use report_stream::{ReportJson, ReportSink};
pub use safe_json::{is_unsafe_char, plain_prefix_len};
pub use session::{Session, TraceCache};
pub use views::memory::{MemoryDocument, MemoryOptions, MemoryResult};
pub use views::*;

/// Told when a read of many bytes starts and ends, so a front end can show progress.
pub trait Progress: Send + Sync {
    /// Reading `files` starts; the callback returned (if any) is told the bytes read of
    /// each file as they grow (each file counts from 0).
    fn start(&self, files: &[PathBuf]) -> Option<ProgressFn>;
    /// The read is over.
    fn finish(&self);
}

/// The engine: how to read, and whom to tell about progress.
#[derive(Clone, Default)]
pub struct Engine {
    /// Reader options (strictness, threads).
    pub read: ReadOptions,
    /// Progress sink, if any.
    pub progress: Option<Arc<dyn Progress>>,
    /// Where traces already read are kept (a [`Session`]'s); `None`: every view reads.
    pub cache: Option<Arc<TraceCache>>,
}

impl Engine {
    /// An engine reading with `read`.
    pub fn new(read: ReadOptions) -> Self {
        Self {
            read,
            progress: None,
            cache: None,
        }
    }

    /// The same engine, reporting progress to `progress`.
    pub fn with_progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = Some(progress);
        self
    }
}
