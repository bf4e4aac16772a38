//! Interned strings: every name and repeated text is stored once and referred to by a
//! 4-byte [`StrId`].

use rustc_hash::FxHashMap;

/// An interned string's id; valid only in the [`StringTable`] that issued it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

/// A string interner: id → text and text → id.
#[derive(Debug, Default, Clone)]
pub struct StringTable {
    texts: Vec<Box<str>>,
    ids: FxHashMap<Box<str>, StrId>,
}

impl StringTable {
    /// An interner that already holds the empty string as `StrId(0)`.
    pub fn new() -> Self {
        let mut t = Self::default();
        t.intern("");
        t
    }

    /// The id of `text`, adding it if new.
    pub fn intern(&mut self, text: &str) -> StrId {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = StrId(self.texts.len() as u32);
        self.texts.push(text.into());
        self.ids.insert(text.into(), id);
        id
    }

    /// The id of `text` if it was interned.
    pub fn find(&self, text: &str) -> Option<StrId> {
        self.ids.get(text).copied()
    }

    /// The text of an id.
    pub fn get(&self, id: StrId) -> &str {
        &self.texts[id.0 as usize]
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// Whether nothing is interned.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// All strings in id order.
    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        self.texts
            .iter()
            .enumerate()
            .map(|(i, s)| (StrId(i as u32), &**s))
    }
}
