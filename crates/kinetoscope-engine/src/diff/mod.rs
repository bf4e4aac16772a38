//! `kinetoscope diff BASE NEW`: two runs compared, and the CI gate `--fail-if`.
//!
//! Each side is a trace, a rank folder, a run folder (read now, through
//! [`Engine::report`]) or a saved `kinetoscope report --format json` document (a CI
//! baseline, read back with [`crate::from_json`]). Both become report documents, whose
//! traces carry the per-step data a comparison needs (`TraceReport::profile`); then
//! [`compare::compare`] puts them side by side and [`gate::evaluate`] applies the
//! gates. Method and grammar: `docs/diff.md`.

mod compare;
pub mod document;
mod findings;
pub mod gate;
mod load;

pub use compare::DiffOptions;
pub use document::DiffDocument;
pub use gate::{GateExpr, GateResult};

use kinetoscope_advisor::Config;

use crate::error::EngineResult;
use crate::input::Source;
use crate::Engine;

impl Engine {
    /// `diff`: compare `base` with `new` (each a trace, folder or saved report) and
    /// evaluate the gates of `opts`.
    pub fn diff(
        &self,
        base: &Source,
        new: &Source,
        config: &Config,
        opts: &DiffOptions,
    ) -> EngineResult<DiffDocument> {
        let (b, b_info) = self.load_side(base, config)?;
        let (n, n_info) = self.load_side(new, config)?;
        Ok(compare::compare(&b, &n, (b_info, n_info), opts))
    }
}
