//! A per-string cache of a yes/no test on names, so a test on text (a prefix, a list
//! lookup, a substring search) runs once per distinct name, not once per event.

use kinetoscope_trace::{StrId, StringTable};

/// Cached answers of one predicate, indexed by [`StrId`].
pub(crate) struct NameFlags<F> {
    test: F,
    /// 0 = not asked yet, 1 = no, 2 = yes.
    flags: Vec<u8>,
}

impl<F: Fn(&str) -> bool> NameFlags<F> {
    /// A cache of `test` over the strings of one trace.
    pub(crate) fn new(strings: &StringTable, test: F) -> Self {
        Self {
            test,
            flags: vec![0; strings.len()],
        }
    }

    /// The answer for one string.
    pub(crate) fn get(&mut self, strings: &StringTable, id: StrId) -> bool {
        let i = id.0 as usize;
        if i >= self.flags.len() {
            return (self.test)(strings.get(id));
        }
        if self.flags[i] == 0 {
            self.flags[i] = if (self.test)(strings.get(id)) { 2 } else { 1 };
        }
        self.flags[i] == 2
    }
}
