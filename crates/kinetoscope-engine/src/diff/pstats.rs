//! pstats in `diff`: two cProfile / profile files compared function by function
//! ([`Engine::diff_pstats`], its own document), and the pstats files of two run folders
//! compared as a section of the run diff ([`Engine::folder_pstats_diff`]).

use std::path::Path;

use kinetoscope_analysis::pstats::diff::{diff, PstatsDiff};
use kinetoscope_analysis::pstats::Stats;
use kinetoscope_trace::read::{sniff_path, ContentKind};
use serde::{Deserialize, Serialize};

use crate::document::SCHEMA_VERSION;
use crate::error::EngineResult;
use crate::input::Source;
use crate::views::pstats::pstats_files;
use crate::Engine;

/// `kinetoscope diff A.prof B.prof`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PstatsDiffDocument {
    /// JSON schema version.
    pub schema_version: u32,
    /// Always `"pstats_diff"`.
    pub kind: String,
    /// The base files.
    pub base: Vec<String>,
    /// The new files.
    pub new: Vec<String>,
    /// The comparison.
    pub pstats: PstatsDiff,
}

/// Whether `path` is a file whose content is a pstats (marshal) file.
pub fn is_pstats_file(path: &Path) -> bool {
    path.is_file() && sniff_path(path).is_ok_and(|s| s.kind() == ContentKind::Pstats)
}

impl Engine {
    /// Compare two pstats sources (files, or folders of them summed).
    pub fn diff_pstats(&self, base: &Source, new: &Source) -> EngineResult<PstatsDiffDocument> {
        let b = self.read_pstats_sources(std::slice::from_ref(base))?;
        let n = self.read_pstats_sources(std::slice::from_ref(new))?;
        let names = |v: &[kinetoscope_trace::PstatsProfile]| {
            v.iter().map(|p| p.path.display().to_string()).collect()
        };
        let (base_names, new_names) = (names(&b), names(&n));
        Ok(PstatsDiffDocument {
            schema_version: SCHEMA_VERSION,
            kind: "pstats_diff".to_owned(),
            base: base_names,
            new: new_names,
            pstats: diff(&Stats::load(b), &Stats::load(n)),
        })
    }

    /// The pstats files of two folders compared, when both have some; `None` otherwise
    /// (or when they cannot be read: the run diff does not fail for them).
    pub(crate) fn folder_pstats_diff(&self, base: &Source, new: &Source) -> Option<PstatsDiff> {
        let files = |s: &Source| match s.path() {
            Some(p) if p.is_dir() => pstats_files(p).ok().filter(|f| !f.is_empty()),
            _ => None,
        };
        files(base)?;
        files(new)?;
        self.diff_pstats(base, new).ok().map(|d| d.pstats)
    }
}
