//! The kept events made valid JSON: each kept element's JSON fixes made once
//! ([`fix_json`]), and any element still not valid JSON afterwards (a defect the fixes
//! do not cover, such as stray bytes between the numbers of a nested array, which the
//! reader skips over) taken out as unreadable, so that the decisions that depend on it
//! (its flows, the GPU work it launched) are taken again without it. "Valid" is
//! `serde_json`'s judgement, a parser independent of the reader's lenient lexer.

use rustc_hash::FxHashMap;

use super::repair::{fix_json, is_valid_json, JsonFixes};
use super::select::{Class, Records};

/// The kept elements' bytes where the fixes changed them, and what was found.
#[derive(Debug, Default)]
pub struct Fixed {
    /// Record index → its fixed bytes (only those that changed).
    pub bytes: FxHashMap<usize, Vec<u8>>,
    /// The JSON fixes made.
    pub fixes: JsonFixes,
    /// Elements still not valid JSON once fixed: marked [`Class::Malformed`].
    pub invalid: u64,
    /// Which records were looked at already.
    checked: Vec<bool>,
}

impl Fixed {
    /// Fix and check each kept record not checked before; those still invalid become
    /// [`Class::Malformed`]. Returns how many did (the decisions must then be taken
    /// again, and this called again for what they newly keep).
    pub fn check(&mut self, text: &[u8], recs: &mut Records<'_>, keep: &[bool]) -> u64 {
        self.checked.resize(recs.items.len(), false);
        let mut found = 0;
        let mut buf = Vec::new();
        for (i, r) in recs.items.iter_mut().enumerate() {
            if !keep[i] || std::mem::replace(&mut self.checked[i], true) {
                continue;
            }
            let original = &text[r.start..r.end];
            let name = r
                .name
                .filter(|_| r.unescaped_quote)
                .map(|(s, e)| (s - r.start, e - r.start));
            let mut fixes = self.fixes;
            let changed = fix_json(original, name, &mut buf, &mut fixes);
            let bytes = if changed { &buf[..] } else { original };
            if !is_valid_json(bytes) {
                r.class = Class::Malformed;
                found += 1;
                continue;
            }
            self.fixes = fixes;
            if changed {
                self.bytes.insert(i, std::mem::take(&mut buf));
            }
        }
        self.invalid += found;
        found
    }
}
