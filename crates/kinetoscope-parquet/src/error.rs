//! Errors of an export and of reading one back: each names the file or folder.

use std::path::{Path, PathBuf};

/// What went wrong, and where.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ExportError {
    /// The file or folder.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

impl ExportError {
    /// An error about `path`.
    pub fn new(path: &Path, message: impl std::fmt::Display) -> Self {
        Self {
            path: path.to_owned(),
            message: message.to_string(),
        }
    }
}

/// `Result` with an [`ExportError`].
pub type ExportResult<T> = Result<T, ExportError>;
