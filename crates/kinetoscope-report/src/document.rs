//! The envelope every view command's JSON document shares: schema version, the input
//! path and its layout, one result per trace read and the traces that could not be read.

use kinetoscope_trace::RunPhase;
use serde::Serialize;

use crate::SCHEMA_VERSION;

/// How the input path was laid out.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "layout", rename_all = "snake_case")]
pub enum InputLayout {
    /// One file.
    File,
    /// A folder of rank (or worker) trace files.
    RankFolder,
    /// A run folder of phase files, in stage order.
    RunFolder {
        /// The phases and their files.
        phases: Vec<RunPhase>,
    },
}

/// A trace that could not be read.
#[derive(Clone, Debug, Serialize)]
pub struct ReadFailure {
    /// The file.
    pub path: String,
    /// The error, with its location.
    pub error: String,
}

/// Everything a view command shows for one input path: one `T` per trace read.
///
/// `X` holds the command's own options (`group_by`, `sort`, `top`, ...); its fields are
/// written right after the layout, before `traces`. `()` writes nothing.
#[derive(Clone, Debug, Serialize)]
pub struct Document<T, X = ()> {
    /// JSON schema version.
    pub schema_version: u32,
    /// The path given.
    pub input: String,
    /// Its layout.
    #[serde(flatten)]
    pub layout: InputLayout,
    /// The command's options, written inline.
    #[serde(flatten)]
    pub options: X,
    /// One result per trace read, in file order.
    pub traces: Vec<T>,
    /// Traces that could not be read.
    pub errors: Vec<ReadFailure>,
}

impl<T, X: Default> Document<T, X> {
    /// An empty document for `input`, with default options.
    pub fn new(input: String, layout: InputLayout) -> Self {
        Self::with_options(input, layout, X::default())
    }
}

impl<T, X> Document<T, X> {
    /// An empty document for `input` with `options`.
    pub fn with_options(input: String, layout: InputLayout, options: X) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            input,
            layout,
            options,
            traces: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Whether the input holds more than one trace file (a rank or run folder).
    pub fn multi(&self) -> bool {
        !matches!(self.layout, InputLayout::File)
    }
}

/// The options of a sorted, cut table view (`kinetoscope ops`, `kinetoscope kernels`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TableOptions<G> {
    /// Grouping of the rows.
    pub group_by: G,
    /// Sort key (`device_self`, `total`, ...).
    pub sort: String,
    /// Rows kept per trace (0 = all).
    pub top: usize,
}
