//! The engine's errors: each names the input and, where a common mistake explains it,
//! carries a hint.

use std::path::PathBuf;

use kinetoscope_trace::TraceError;

/// Why a view could not be computed at all (a trace that fails inside a folder is
/// reported in the document's `errors` instead).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The input could not be opened or read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// Every trace of the input failed; the first failure.
    #[error("{error}")]
    NothingRead {
        /// The file that failed first.
        path: PathBuf,
        /// Its error.
        error: String,
        /// What the input held that kinetoscope could read, when not a trace.
        hint: Option<String>,
    },
    /// The view needs a different kind of input.
    #[error("{path}: {message}")]
    WrongInput {
        /// The input.
        path: String,
        /// What the view needs.
        message: String,
        /// What to run instead.
        hint: Option<String>,
    },
    /// An option is out of range.
    #[error("{0}")]
    Option(String),
    /// A Parquet export could not be written, or an export could not be read back.
    #[error(transparent)]
    Parquet(#[from] kinetoscope_parquet::ExportError),
    /// A report streamed as it was made could not be written.
    #[error("cannot write the report: {0}")]
    Write(std::io::Error),
    /// A timeline query asked for what the trace does not have.
    #[error("{}", query_text(.0))]
    Query(kinetoscope_analysis::timeline::QueryError),
}

/// The words for a timeline query error.
fn query_text(e: &kinetoscope_analysis::timeline::QueryError) -> String {
    use kinetoscope_analysis::timeline::QueryError;
    match e {
        QueryError::EmptyWindow { start_ns, end_ns } => {
            format!("empty window: end_ns ({end_ns}) must be after start_ns ({start_ns})")
        }
        QueryError::UnknownTrack { id } => format!("no track {id} in this timeline"),
        QueryError::UnknownEvent { id } => format!("no event {id} in this trace"),
        QueryError::TooManyTracks { asked } => format!(
            "{asked} tracks asked; a window answers at most {}",
            kinetoscope_analysis::timeline::MAX_TRACKS
        ),
    }
}

impl EngineError {
    /// A line telling the user what to do instead, for common mistakes.
    pub fn hint(&self) -> Option<String> {
        match self {
            EngineError::NothingRead { hint, .. } | EngineError::WrongInput { hint, .. } => {
                hint.clone()
            }
            EngineError::Trace(TraceError::NotATrace { looks_like, .. }) => {
                hint_for_content(looks_like)
            }
            EngineError::Trace(TraceError::EmptyInput { .. }) => Some(
                "give a trace file (*.json, *.json.gz), a folder of rank traces, or a run \
                 folder with stageN-<phase>_trace.json files"
                    .to_owned(),
            ),
            _ => None,
        }
    }
}

/// What to do with PyTorch's HTML memory timeline, which holds a picture and no numbers.
pub(crate) const HTML_TIMELINE_HINT: &str = "PyTorch's HTML memory timeline is a picture (an \
     embedded PNG) with no numbers in it: export the data with \
     prof.export_memory_timeline(\"mem.json\") or (\"mem.raw.json.gz\") and run \
     `kinetoscope memory` on that file, or on the trace";

/// The hint for a file whose content is not a Kineto trace.
pub(crate) fn hint_for_content(looks_like: &str) -> Option<String> {
    let l = looks_like.to_ascii_lowercase();
    if l.contains("html page") {
        Some(HTML_TIMELINE_HINT.to_owned())
    } else if l.contains("pickle") {
        Some("a CUDA memory snapshot? run `kinetoscope memory FILE`".to_owned())
    } else if l.contains("memory timeline") {
        Some("a profiler memory timeline: run `kinetoscope memory FILE`".to_owned())
    } else if l.contains("marshal") {
        Some("a cProfile/pstats file: run `kinetoscope pstats FILE`".to_owned())
    } else if l.contains("key_averages table") {
        Some("a PyTorch key_averages table: run `kinetoscope tables FILE`".to_owned())
    } else if l.contains("execution trace") {
        Some(
            "kinetoscope reads the Kineto trace (torch.profiler) of a run; an execution trace \
             (ExecutionTraceObserver) describes the graph, not the timing"
                .to_owned(),
        )
    } else {
        None
    }
}

/// The engine's result type.
pub type EngineResult<T> = Result<T, EngineError>;
