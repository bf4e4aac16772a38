//! One side of a comparison: traces read now, or a saved `report` document.
//!
//! A saved document is recognised by its first key, `"schema_version"` (kinetoscope
//! writes every document's fields in a fixed order, and no Kineto trace starts that
//! way), or, when the file is not a trace, by a top-level `schema_version` anywhere (a
//! document re-written with its keys in another order). Documents of an older schema than [`REPORT_PROFILE_SINCE`] lack the per-step
//! data and are refused with the command that makes a new one; newer ones are refused
//! too.

use std::io::Read;
use std::path::Path;

use kinetoscope_advisor::Config;

use super::compare::combine_of;
use super::document::{SideFrom, SideInfo};
use crate::document::{from_json, ReportDocument, SCHEMA_VERSION};
use crate::error::{EngineError, EngineResult};
use crate::input::Source;
use crate::Engine;

/// The first schema whose `report` documents carry what a comparison needs.
pub const REPORT_PROFILE_SINCE: u32 = 3;

/// Saved documents larger than this are refused (a report is a few MB at most).
pub const MAX_SAVED_BYTES: u64 = 1 << 30;

impl Engine {
    /// A side as a report document, with where it came from.
    pub(super) fn load_side(
        &self,
        src: &Source,
        config: &Config,
    ) -> EngineResult<(ReportDocument, SideInfo)> {
        if let Source::Path(p) = src {
            if p.is_file() {
                if let Some(version) = saved_version(p)? {
                    let doc = read_saved(p, version)?;
                    let info = info(src, &doc, SideFrom::SavedReport, version);
                    return Ok((doc, info));
                }
            }
        }
        let doc = match self.report(src, config) {
            Ok(doc) => doc,
            Err(e) => {
                // A saved document whose keys were reordered (re-written by another
                // tool) does not start with `schema_version`: look for it in the whole
                // file before giving the reader's error.
                let path = src.path().filter(|p| p.is_file());
                let Some(version) = path.and_then(version_anywhere) else {
                    return Err(e);
                };
                let path = path.expect("a version was found in the file");
                let doc = read_saved(path, version)?;
                let info = info(src, &doc, SideFrom::SavedReport, version);
                return Ok((doc, info));
            }
        };
        let info = info(src, &doc, SideFrom::Traces, SCHEMA_VERSION);
        Ok((doc, info))
    }
}

/// The top-level `schema_version` of a JSON object file of at most
/// [`MAX_SAVED_BYTES`], in whatever key order.
fn version_anywhere(path: &Path) -> Option<u32> {
    #[derive(serde::Deserialize)]
    struct Version {
        schema_version: u32,
    }
    let len = std::fs::metadata(path).ok()?.len();
    if len > MAX_SAVED_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    if !text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
    {
        return None;
    }
    from_json::<Version>(&text).ok().map(|v| v.schema_version)
}

fn info(src: &Source, doc: &ReportDocument, from: SideFrom, schema_version: u32) -> SideInfo {
    SideInfo {
        input: src.name(),
        from,
        combine: combine_of(&doc.layout),
        traces: doc.traces.len(),
        schema_version,
    }
}

/// The schema version of a saved kinetoscope document, or `None` for anything else.
fn saved_version(path: &Path) -> EngineResult<Option<u32>> {
    let mut head = [0u8; 64];
    let mut f = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let mut len = 0;
    while len < head.len() {
        match f.read(&mut head[len..]) {
            Ok(0) => break,
            Ok(k) => len += k,
            Err(e) => return Err(io(path, e)),
        }
    }
    Ok(version_of(&head[..len]))
}

/// `{ "schema_version": N` at the start of `head` (after a BOM and whitespace).
fn version_of(head: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head))
        .ok()
        .or_else(|| std::str::from_utf8(&head[..head.len().saturating_sub(3)]).ok())?;
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest.strip_prefix("\"schema_version\"")?.trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn io(path: &Path, e: std::io::Error) -> EngineError {
    EngineError::WrongInput {
        path: path.display().to_string(),
        message: format!("cannot read: {e}"),
        hint: None,
    }
}

/// Read a saved report document of schema `version`.
fn read_saved(path: &Path, version: u32) -> EngineResult<ReportDocument> {
    let wrong = |message: String, hint: Option<String>| EngineError::WrongInput {
        path: path.display().to_string(),
        message,
        hint,
    };
    let again = Some(format!(
        "save the baseline again with this kinetoscope: `kinetoscope report TRACE --format json > {}`",
        path.display()
    ));
    if version < REPORT_PROFILE_SINCE {
        return Err(wrong(
            format!(
                "a kinetoscope document of schema {version}, which lacks the per-step data a \
                 comparison needs (schema {REPORT_PROFILE_SINCE} and later have it)"
            ),
            again,
        ));
    }
    if version > SCHEMA_VERSION {
        return Err(wrong(
            format!(
                "a kinetoscope document of schema {version}, newer than this kinetoscope reads \
                 ({SCHEMA_VERSION})"
            ),
            Some("compare it with the kinetoscope that wrote it".to_owned()),
        ));
    }
    let len = std::fs::metadata(path).map_err(|e| io(path, e))?.len();
    if len > MAX_SAVED_BYTES {
        return Err(wrong(
            format!("a saved document of {len} bytes, more than the {MAX_SAVED_BYTES} read"),
            None,
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
    let doc: ReportDocument = from_json(&text).map_err(|e| {
        wrong(
            format!(
                "not a saved `report` document (line {}, column {}: {e})",
                e.line(),
                e.column()
            ),
            Some("a baseline is the output of `kinetoscope report TRACE --format json`".to_owned()),
        )
    })?;
    if doc.traces.iter().any(|t| t.profile.is_none()) {
        return Err(wrong(
            "a saved report without per-step data (written by `report` before schema 3?)"
                .to_owned(),
            again,
        ));
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::version_of;

    #[test]
    fn recognises_saved_documents_only() {
        assert_eq!(
            version_of(b"{\n  \"schema_version\": 3,\n  \"input\""),
            Some(3)
        );
        assert_eq!(version_of(b"\xef\xbb\xbf{\"schema_version\":12}"), Some(12));
        assert_eq!(
            version_of(b"{\n  \"schemaVersion\": 1, \"traceEvents\""),
            None
        );
        assert_eq!(version_of(b"[{\"ph\": \"X\"}]"), None);
        assert_eq!(version_of(b"\x1f\x8b\x08"), None);
    }
}
