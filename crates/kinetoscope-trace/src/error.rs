//! The error type of the readers: every error names the file and, where it applies, the
//! byte offset and the event index at which reading failed.

use std::path::PathBuf;

/// Result alias for the readers.
pub type TraceResult<T> = Result<T, TraceError>;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// The file is not a Kineto trace; `looks_like` says what it appears to be.
    #[error("{path}: not a Kineto Chrome trace: {looks_like}")]
    NotATrace {
        /// The file.
        path: PathBuf,
        /// A description of what the content looks like (for example "a Python pickle").
        looks_like: String,
    },
    /// The content is not the kind of artifact that was asked for, or not in its shape
    /// (a memory timeline that is a trace, a timeline row with too few columns).
    #[error("{path}: not a {expected}: {why}")]
    NotA {
        /// The file.
        path: PathBuf,
        /// What was asked for ("memory timeline").
        expected: &'static str,
        /// What the content is instead, or where it departs from the shape.
        why: String,
    },
    /// The JSON is malformed at a known place (strict mode, or a defect that leniency
    /// cannot get past).
    #[error("{path}: byte {offset}{}: {message}", event_index.map(|i| format!(", event #{i}")).unwrap_or_default())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Byte offset in the (decompressed) JSON text.
        offset: u64,
        /// Index of the event in `traceEvents`, when inside the event array.
        event_index: Option<u64>,
        /// What was found and what was expected.
        message: String,
    },
    /// Reading needed more memory than the budget had left (or than the system gave):
    /// never an abort.
    #[error("{path}: byte {offset}: {}", oom_text(*needed, *in_use, *limit))]
    OutOfMemory {
        /// The file.
        path: PathBuf,
        /// Byte offset in the (decompressed) text where reading stopped.
        offset: u64,
        /// Bytes the failed step needed.
        needed: u64,
        /// Bytes held by the readers sharing the budget at the time.
        in_use: u64,
        /// The budget (`ReadOptions::budget`), or `None` when the system refused.
        limit: Option<u64>,
    },
    /// An Nsight Systems report (`.nsys-rep`, `.qdrep`), which kinetoscope reads once
    /// exported to SQLite.
    #[error("{path}: an Nsight Systems report; export it to SQLite first, then give kinetoscope the .sqlite file:\n  {command}")]
    NsysReport {
        /// The report.
        path: PathBuf,
        /// The export command.
        command: String,
    },
    /// A folder that holds nothing kinetoscope can read.
    #[error("{path}: {message}")]
    EmptyInput {
        /// The folder.
        path: PathBuf,
        /// What was looked for.
        message: String,
    },
}

impl TraceError {
    /// A defect at byte `offset` of `path` that belongs to no event (a pickle, a pstats
    /// file, a text table).
    pub(crate) fn malformed(path: &std::path::Path, offset: u64, message: String) -> Self {
        Self::Malformed {
            path: path.to_owned(),
            offset,
            event_index: None,
            message,
        }
    }
}

/// The words of an out-of-memory error: what was needed, against what, and what to do.
fn oom_text(needed: u64, in_use: u64, limit: Option<u64>) -> String {
    use crate::read::size_text;
    let what = match limit {
        Some(l) => format!(
            "reading needs {} more, {} of the {} budget in use",
            size_text(needed),
            size_text(in_use),
            size_text(l)
        ),
        None => format!("the system refused {}", size_text(needed)),
    };
    format!(
        "out of memory: {what}; trim the trace, read fewer ranks at once, or raise --max-memory"
    )
}
