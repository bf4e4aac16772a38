//! A function of event names, computed once per distinct name: traces repeat a few
//! thousand names over millions of events, so a string test per event (a substring
//! search, a list of known names) would cost far more than the pass itself.

use kinetoscope_trace::{StrId, Trace};

/// `f` over the names of `trace`, each name computed at most once.
pub struct NameMemo<'t, T, F> {
    trace: &'t Trace,
    f: F,
    /// Per name id, the value once computed.
    known: Vec<Option<T>>,
}

impl<'t, T: Copy, F: FnMut(&'t str) -> T> NameMemo<'t, T, F> {
    /// A memo of `f` over the names of `trace`.
    pub fn new(trace: &'t Trace, f: F) -> Self {
        Self {
            trace,
            f,
            known: vec![None; trace.strings.len()],
        }
    }

    /// `f` of the name `id`.
    pub fn get(&mut self, id: StrId) -> T {
        let n = id.0 as usize;
        if let Some(Some(v)) = self.known.get(n) {
            return *v;
        }
        let v = (self.f)(self.trace.strings.get(id));
        if let Some(slot) = self.known.get_mut(n) {
            *slot = Some(v);
        }
        v
    }
}
