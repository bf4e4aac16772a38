//! Rendered documents kept by key (run, view, options) and the stamps of the files they
//! were computed from, least recently used first out, within a byte budget.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::traces::{lock, FileStamp};

/// A cached document and its bookkeeping.
struct Entry {
    stamps: Vec<FileStamp>,
    text: Arc<str>,
    used: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<String, Entry>,
    clock: u64,
    bytes: u64,
}

/// Documents (their JSON text) by key, at most `max_bytes` of text.
pub struct DocumentCache {
    max_bytes: u64,
    state: Mutex<State>,
}

impl DocumentCache {
    /// A cache keeping at most `max_bytes` of document text.
    pub fn new(max_bytes: u64) -> Self {
        Self {
            max_bytes,
            state: Mutex::new(State::default()),
        }
    }

    /// The document cached under `key` if it was made from files with these `stamps`.
    pub fn get(&self, key: &str, stamps: &[FileStamp]) -> Option<Arc<str>> {
        let mut state = lock(&self.state);
        state.clock += 1;
        let now = state.clock;
        let e = state.entries.get_mut(key)?;
        if e.stamps != stamps {
            return None;
        }
        e.used = now;
        Some(e.text.clone())
    }

    /// Keep `text` under `key`, made from files with these `stamps`.
    pub fn put(&self, key: String, stamps: Vec<FileStamp>, text: Arc<str>) {
        if text.len() as u64 > self.max_bytes {
            return;
        }
        let mut state = lock(&self.state);
        state.clock += 1;
        let used = state.clock;
        state.bytes += text.len() as u64;
        if let Some(old) = state.entries.insert(key, Entry { stamps, text, used }) {
            state.bytes -= old.text.len() as u64;
        }
        while state.bytes > self.max_bytes {
            let Some(oldest) = state
                .entries
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                return;
            };
            if let Some(e) = state.entries.remove(&oldest) {
                state.bytes -= e.text.len() as u64;
            }
        }
    }
}
