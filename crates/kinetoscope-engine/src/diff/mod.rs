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
pub mod pstats;

pub use compare::{combine_of, DiffOptions};
pub use document::DiffDocument;
pub use gate::{GateExpr, GateResult};
pub use pstats::{is_pstats_file, PstatsDiffDocument};

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
        // Both sides at once: reading a trace uses every core, but the analyses after it
        // run on one thread per trace, so two sides overlap there. Progress is shown for
        // the base side only (one bar).
        let quiet = Engine {
            read: self.read.clone(),
            progress: None,
            cache: self.cache.clone(),
        };
        let (b, n) = std::thread::scope(|s| {
            let n = s.spawn(|| quiet.load_side(new, config));
            let b = self.load_side(base, config);
            (b, n.join())
        });
        let (b, b_info) = b?;
        let (n, n_info) = n.unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        let mut doc = compare::compare(&b, &n, (b_info, n_info), opts);
        doc.pstats = self.folder_pstats_diff(base, new);
        Ok(doc)
    }
}
