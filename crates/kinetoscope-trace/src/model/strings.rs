//! Interned strings: every name and repeated text is stored once and referred to by a
//! 4-byte [`StrId`]. Texts live back to back in one byte arena with their end offsets,
//! and the lookup table holds only ids (hashed by the text they point at), so a distinct
//! string costs its bytes plus about 14 bytes, never an allocation of its own.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::{grow, Charge, MemoryError};

/// An interned string's id; valid only in the [`StringTable`] that issued it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

/// Byte strings back to back in one buffer, by index: string `i` is
/// `bytes[starts[i]..starts[i + 1]]` (`starts` begins with a 0).
#[derive(Debug, Clone)]
pub(crate) struct TextArena {
    bytes: Vec<u8>,
    starts: Vec<u64>,
}

impl Default for TextArena {
    fn default() -> Self {
        Self {
            bytes: Vec::new(),
            starts: vec![0],
        }
    }
}

impl TextArena {
    /// The bytes of string `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        &self.bytes[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// Number of strings.
    #[inline]
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Bytes of text held.
    pub fn text_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Append a string, taking the bytes of any growth from `charge` first.
    pub fn push(&mut self, text: &[u8], charge: &mut Charge) -> Result<(), MemoryError> {
        grow(&mut self.bytes, text.len(), charge)?;
        grow(&mut self.starts, 1, charge)?;
        self.bytes.extend_from_slice(text);
        self.starts.push(self.bytes.len() as u64);
        Ok(())
    }

    /// Forget every string, keeping the allocations.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.starts.truncate(1);
    }

    /// The byte buffer and the start offsets (one more than strings), as stored.
    pub fn parts(&self) -> (&[u8], &[u64]) {
        (&self.bytes, &self.starts)
    }

    /// An arena from stored parts, checked: `starts` begins with 0, never decreases and
    /// ends at the buffer's length, the buffer is UTF-8 and every start is a character
    /// boundary (so every string is UTF-8). `None` when any check fails.
    pub fn from_parts(bytes: Vec<u8>, starts: Vec<u64>) -> Option<Self> {
        let text = std::str::from_utf8(&bytes).ok()?;
        let ordered = starts.first() == Some(&0)
            && starts.last() == Some(&(bytes.len() as u64))
            && starts.windows(2).all(|w| w[0] <= w[1]);
        let boundaries = starts.iter().all(|&s| text.is_char_boundary(s as usize));
        (ordered && boundaries).then_some(Self { bytes, starts })
    }
}

/// The hash of a text, as the lookup tables compute it.
#[inline]
fn hash_text(text: &[u8]) -> u64 {
    FxBuildHasher.hash_one(text)
}

/// Ids hashed by the arena text they name: find an id by text, or add one.
#[derive(Debug, Default, Clone)]
pub(crate) struct TextIndex {
    table: HashTable<u32>,
}

impl TextIndex {
    /// The id whose text in `arena` is `text`.
    #[inline]
    pub fn find(&self, arena: &TextArena, text: &[u8]) -> Option<u32> {
        let hash = hash_text(text);
        self.table
            .find(hash, |&id| arena.get(id as usize) == text)
            .copied()
    }

    /// Add `id` (whose text in `arena` is `text`), taking the bytes of any growth of the
    /// table from `charge` first.
    pub fn insert(
        &mut self,
        arena: &TextArena,
        text: &[u8],
        id: u32,
        charge: &mut Charge,
    ) -> Result<(), MemoryError> {
        let rehash = |&id: &u32| hash_text(arena.get(id as usize));
        if self.table.len() == self.table.capacity() {
            let buckets = (self.table.capacity() + 1).next_power_of_two() * 2;
            let bytes = (buckets * (std::mem::size_of::<u32>() + 1)) as u64;
            charge.take(bytes)?;
            self.table
                .try_reserve(self.table.len().max(16), rehash)
                .map_err(|_| MemoryError::refused(bytes))?;
        }
        self.table.insert_unique(hash_text(text), id, rehash);
        Ok(())
    }

    /// Forget every id, keeping the allocation.
    pub fn clear(&mut self) {
        self.table.clear();
    }
}

/// A string interner: id → text and text → id.
#[derive(Default, Clone)]
pub struct StringTable {
    texts: TextArena,
    index: TextIndex,
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
        self.try_intern(text, &mut Charge::default())
            .unwrap_or_else(|e| panic!("interning a string: {e}"))
    }

    /// The id of `text`, adding it if new; the bytes of any growth are taken from
    /// `charge` first, and running out of memory is an error, not an abort.
    pub(crate) fn try_intern(
        &mut self,
        text: &str,
        charge: &mut Charge,
    ) -> Result<StrId, MemoryError> {
        if let Some(id) = self.index.find(&self.texts, text.as_bytes()) {
            return Ok(StrId(id));
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.as_bytes(), charge)?;
        self.index
            .insert(&self.texts, text.as_bytes(), id, charge)?;
        Ok(StrId(id))
    }

    /// A table of the texts of `texts` (which must be distinct), its lookup rebuilt; the
    /// bytes of the lookup are taken from `charge` first.
    pub(crate) fn from_arena(texts: TextArena, charge: &mut Charge) -> Result<Self, MemoryError> {
        let mut index = TextIndex::default();
        for id in 0..texts.len() {
            index.insert(&texts, texts.get(id), id as u32, charge)?;
        }
        Ok(Self { texts, index })
    }

    /// The texts, as stored.
    pub(crate) fn arena(&self) -> &TextArena {
        &self.texts
    }

    /// The id of `text` if it was interned.
    pub fn find(&self, text: &str) -> Option<StrId> {
        self.index.find(&self.texts, text.as_bytes()).map(StrId)
    }

    /// The text of an id.
    pub fn get(&self, id: StrId) -> &str {
        let bytes = self.texts.get(id.0 as usize);
        // SAFETY: `try_intern` is the only way text enters this arena, and it takes a
        // `&str`; strings end at `str` boundaries, so every entry is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// Whether nothing is interned.
    pub fn is_empty(&self) -> bool {
        self.texts.len() == 0
    }

    /// All strings in id order.
    pub fn iter(&self) -> impl Iterator<Item = (StrId, &str)> {
        (0..self.len()).map(|i| (StrId(i as u32), self.get(StrId(i as u32))))
    }
}

impl std::fmt::Debug for StringTable {
    /// The texts in id order (the lookup table's layout is left out).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|(_, s)| s)).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_gives_one_id_per_text_in_order() {
        let mut t = StringTable::new();
        let words: Vec<String> = (0..5000).map(|i| format!("name {i}")).collect();
        let ids: Vec<StrId> = words.iter().map(|w| t.intern(w)).collect();
        assert_eq!(ids[0], StrId(1));
        for (w, &id) in words.iter().zip(&ids) {
            assert_eq!(t.intern(w), id);
            assert_eq!(t.get(id), w);
            assert_eq!(t.find(w), Some(id));
        }
        assert_eq!(t.get(StrId(0)), "");
        assert_eq!(t.find("missing"), None);
        assert_eq!(t.len(), 5001);
        let listed: Vec<&str> = t.iter().skip(1).map(|(_, s)| s).collect();
        assert_eq!(listed, words);
    }
}
