//! Errors a request gets: a status and a message, sent as
//! `{"error": {"status": N, "message": "..."}}`.

use kinetoscope_engine::EngineError;

use crate::http::{error_response, Response};

/// Why a request could not be answered.
#[derive(Debug, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// What went wrong, for the user.
    pub message: String,
}

impl ApiError {
    /// 400: a malformed or unknown parameter.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }

    /// 404: no such run, worker, view or path.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, message)
    }

    /// An error with any status.
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// The response carrying it.
    pub fn response(&self) -> Response {
        error_response(self.status, &self.message)
    }
}

impl From<EngineError> for ApiError {
    /// A view that needs another input or an option out of range is the request's
    /// fault (400); a query for what the trace lacks is 404; a trace that cannot be read
    /// is 422, with the engine's message (it names the file and the place).
    fn from(e: EngineError) -> Self {
        let status = match &e {
            EngineError::WrongInput { .. } | EngineError::Option(_) => 400,
            EngineError::Query(
                kinetoscope_analysis::timeline::QueryError::EmptyWindow { .. }
                | kinetoscope_analysis::timeline::QueryError::TooManyTracks { .. },
            ) => 400,
            EngineError::Query(_) => 404,
            EngineError::Trace(_) | EngineError::NothingRead { .. } | EngineError::Parquet(_) => {
                422
            }
            EngineError::Write(_) => 500,
        };
        let mut message = e.to_string();
        if let Some(hint) = e.hint() {
            message.push_str(&format!(" (hint: {hint})"));
        }
        Self::new(status, message)
    }
}
