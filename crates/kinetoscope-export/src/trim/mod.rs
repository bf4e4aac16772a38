//! `kinetoscope trim`: a smaller Kineto trace cut from a larger one, whose kept events
//! are the input's own bytes (`docs/trim.md`).
//!
//! The decisions come from the model and the analyses: the step windows from
//! [`kinetoscope_analysis::steps`], the rank from [`kinetoscope_trace::TraceMeta::rank`],
//! the time base from the model's metadata. The bytes come from the reader's span API
//! ([`kinetoscope_trace::read::spans`]): [`select`] records each element and decides
//! what is kept, [`overlap`] and [`repair`] decide the few rewrites, [`writer`] writes
//! into any [`Write`] (a file, gzip, memory).

pub mod frame;
pub mod overlap;
pub mod repair;
pub mod select;
pub mod valid;
pub mod window;
pub mod writer;

use std::io::Write;
use std::path::{Path, PathBuf};

use kinetoscope_engine::input::map_bytes;
use kinetoscope_engine::Engine;
use kinetoscope_trace::read::spans::TraceText;
use kinetoscope_trace::read::ReadOptions;
use kinetoscope_trace::{Trace, TraceError};
use window::TraceFacts;

use crate::MergeInput;

pub use repair::JsonFixes;
pub use window::{TimePoint, TimeRange, Window};

/// What to keep.
#[derive(Clone, Debug, Default)]
pub struct TrimOptions {
    /// Keep the window of `ProfilerStep#first` to `#last` (inclusive, numbers as
    /// written).
    pub steps: Option<(i64, i64)>,
    /// Keep a time window (intersected with the steps' when both are given).
    pub time: Option<TimeRange>,
    /// Keep only GPU activities (kernels, copies, sets, GPU annotations, syncs) and
    /// metadata.
    pub kernels_only: bool,
    /// Drop Python frames (`python_function` and `python` events).
    pub drop_stacks: bool,
}

/// Why a trim failed.
#[derive(Debug, thiserror::Error)]
pub enum TrimError {
    /// The input could not be read.
    #[error(transparent)]
    Read(#[from] TraceError),
    /// The steps asked for are not in the trace.
    #[error("{}: no ProfilerStep#{first}..#{last} in this trace (it has {found})", path.display())]
    NoSteps {
        /// The trace.
        path: PathBuf,
        /// First step asked for.
        first: i64,
        /// Last step asked for.
        last: i64,
        /// What it has.
        found: String,
    },
    /// Writing failed.
    #[error("cannot write: {0}")]
    Write(#[from] std::io::Error),
}

/// The repairs of a trim, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Repairs {
    /// JSON fixes in kept events and in the text around the event array.
    pub json: JsonFixes,
    /// Top-level members before or after the event array dropped: not valid JSON even
    /// fixed, or cut short (a file truncated after its event array).
    pub members_dropped: u64,
    /// Host slices moved to an added thread because they overlapped without nesting.
    pub moved_to_overlap_threads: u64,
    /// Threads added for them.
    pub overlap_threads_added: u64,
    /// GPU slices clipped to the start of the next slice on their stream.
    pub clipped_durations: u64,
}

impl Repairs {
    /// Whether nothing was repaired.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// What a trim did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TrimReport {
    /// The input file.
    pub input: PathBuf,
    /// Its rank, as the reader decided it.
    pub rank: Option<i64>,
    /// The window kept (model clock, epoch ns); `None`: every time.
    pub window: Option<Window>,
    /// The steps kept, by name.
    pub steps: Vec<String>,
    /// Elements of the input's event array.
    pub elements_read: u64,
    /// Elements written (added thread names included).
    pub elements_written: u64,
    /// Elements whose bytes differ from the input's (repairs).
    pub elements_rewritten: u64,
    /// Flow elements dropped because another end of their flow was not kept.
    pub flows_dropped: u64,
    /// Elements the reader could not read, dropped.
    pub malformed_dropped: u64,
    /// Elements that were to be kept but stayed invalid JSON after the repairs, dropped.
    pub invalid_dropped: u64,
    /// The input ended inside the event array (its array and object were closed).
    pub truncated: bool,
    /// The repairs.
    pub repairs: Repairs,
    /// Bytes of the input's (inflated) text.
    pub bytes_read: u64,
    /// Bytes written (before any compression).
    pub bytes_written: u64,
}

/// One trace to trim: what its model says (for the decisions) and its text (for the
/// bytes). The model itself is not kept.
pub struct TrimInput {
    facts: TraceFacts,
    text: TraceText,
}

impl TrimInput {
    /// Read the trace at `path` with the engine's reading options (and progress).
    pub fn open(engine: &Engine, path: &Path) -> Result<Self, TrimError> {
        let mut opts = engine.read.clone();
        let progress = engine.progress.as_ref();
        opts.progress = progress.and_then(|p| p.start(&[path.to_owned()]));
        let trace = kinetoscope_trace::read::read_trace(path, &opts);
        if let Some(p) = progress {
            p.finish();
        }
        let facts = TraceFacts::of(&trace?);
        let text = TraceText::open(path)?;
        Ok(Self { facts, text })
    }

    /// A trace already read and its text (bytes in memory, an upload).
    pub fn from_parts(trace: &Trace, text: TraceText) -> Self {
        Self {
            facts: TraceFacts::of(trace),
            text,
        }
    }

    /// The rank the reader decided.
    pub fn rank(&self) -> Option<i64> {
        self.facts.rank
    }

    /// The input's path.
    pub fn path(&self) -> &Path {
        self.text.path()
    }

    /// The window `opts` keep (`None`: every time) and the names of the steps in it;
    /// an error when the steps asked for are not in the trace.
    pub fn window(&self, opts: &TrimOptions) -> Result<(Option<Window>, Vec<String>), TrimError> {
        let facts = &self.facts;
        let mut steps = Vec::new();
        let mut window = None;
        if let Some((first, last)) = opts.steps {
            let (w, names) = window::steps_window(facts, first, last)?;
            window = Some(w);
            steps = names;
        }
        if let Some(range) = &opts.time {
            let w = window::time_window(facts, range);
            window = Some(window.map_or(w, |s| window::intersect(s, w)));
        }
        Ok((window, steps))
    }

    /// Write the trimmed trace into `out` as Perfetto protobuf: the trimmed JSON
    /// ([`TrimInput::write`]) into memory, read back through the engine's reader with
    /// `read`, then the protobuf writer (one process for the trace's rank). The report's
    /// `bytes_written` is the protobuf's size.
    pub fn write_pftrace(
        &self,
        opts: &TrimOptions,
        read: &ReadOptions,
        out: &mut dyn Write,
    ) -> Result<TrimReport, TrimError> {
        let mut json = Vec::new();
        let mut report = self.write(opts, &mut json)?;
        let name = self.path().display().to_string();
        let rank = self.rank().unwrap_or(0);
        let encoded = map_bytes(&name, &json, read, |trace| {
            let mut buf = Vec::new();
            let one = MergeInput {
                rank,
                trace,
                offset_ns: 0,
            };
            crate::pftrace::write_pftrace(&[one], &mut buf).map(|_| buf)
        });
        let bytes = encoded.result??;
        out.write_all(&bytes)?;
        report.bytes_written = bytes.len() as u64;
        Ok(report)
    }

    /// Write the trimmed trace into `out`.
    pub fn write(&self, opts: &TrimOptions, out: &mut dyn Write) -> Result<TrimReport, TrimError> {
        let (window, steps) = self.window(opts)?;
        let text = self.text.bytes();
        let release = |upto| self.text.release(upto);
        let mut recs = select::record(self.text.spans()?, text, self.facts.base_ns, &release);
        let malformed = recs
            .items
            .iter()
            .filter(|r| r.class == select::Class::Malformed)
            .count();
        let filter = select::Filter {
            window,
            kernels_only: opts.kernels_only,
            drop_stacks: opts.drop_stacks,
        };
        let mut kept = select::decide(&recs, &filter);
        let mut fixed = valid::Fixed::default();
        while fixed.check(text, &mut recs, &kept.keep) > 0 {
            kept = select::decide(&recs, &filter);
        }
        let overlaps = overlap::repair_overlaps(&recs, &kept.keep);
        let written = writer::write(text, &recs, &kept.keep, &fixed, &overlaps, out)?;
        Ok(TrimReport {
            input: self.path().to_owned(),
            rank: self.rank(),
            window,
            steps,
            elements_read: recs.items.len() as u64,
            elements_written: written.elements,
            elements_rewritten: written.rewritten,
            flows_dropped: kept.flows_dropped,
            malformed_dropped: malformed as u64,
            invalid_dropped: fixed.invalid,
            truncated: recs.suffix.is_none(),
            repairs: Repairs {
                json: written.json,
                members_dropped: written.members_dropped,
                moved_to_overlap_threads: overlaps.moved,
                overlap_threads_added: overlaps.threads.len() as u64,
                clipped_durations: overlaps.clipped,
            },
            bytes_read: text.len() as u64,
            bytes_written: written.bytes,
        })
    }
}
