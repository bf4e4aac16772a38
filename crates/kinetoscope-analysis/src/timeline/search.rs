//! Name search: the spans whose name contains a text (case-insensitive), earliest
//! first and capped. Names are compared once each (a trace has far fewer names than
//! events); each name's spans are kept sorted by start.

use serde::{Deserialize, Serialize};

use kinetoscope_trace::{EventId, StrId, Trace};

use super::lanes::Lane;
use super::TimelineIndex;

/// The most matches one search returns.
pub const MAX_SEARCH_RESULTS: usize = 1000;

/// One span found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchMatch {
    /// The event id.
    pub event: u32,
    /// Its track.
    pub track: u32,
    /// Start, ns after `t0_ns`.
    pub start_ns: i64,
    /// Duration.
    pub dur_ns: i64,
    /// Its name.
    pub name: String,
}

/// A search's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Matches, earliest first, at most the limit asked.
    pub matches: Vec<SearchMatch>,
    /// How many spans match in all.
    pub total: u64,
    /// Whether matches were left out (`total` > the limit).
    pub truncated: bool,
}

/// The timeline's spans grouped by name, each group sorted by start.
#[derive(Debug, Default)]
pub(crate) struct NameIndex {
    /// Distinct names, in the order of their groups.
    names: Vec<StrId>,
    /// `events[offsets[k]..offsets[k + 1]]`: the spans named `names[k]`.
    offsets: Vec<u32>,
    /// Spans by name, then start.
    events: Vec<EventId>,
}

impl NameIndex {
    /// Group the spans of `lanes` by name (a counting sort by string id).
    pub fn build(trace: &Trace, lanes: &[Vec<Lane>]) -> Self {
        let e = &trace.events;
        let mut spans: Vec<EventId> = lanes
            .iter()
            .flatten()
            .flat_map(|l| l.events.iter().copied())
            .collect();
        spans.sort_by_key(|id| (e.name[id.index()], e.ts_ns[id.index()], id.0));
        let mut names = Vec::new();
        let mut offsets = Vec::new();
        for (k, id) in spans.iter().enumerate() {
            let name = e.name[id.index()];
            if names.last() != Some(&name) {
                names.push(name);
                offsets.push(k as u32);
            }
        }
        offsets.push(spans.len() as u32);
        Self {
            names,
            offsets,
            events: spans,
        }
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        (self.names.len() + self.offsets.len() + self.events.len()) * 4
    }
}

impl TimelineIndex {
    /// Spans whose name contains `query` (case-insensitive), earliest first, at most
    /// `limit` (1 to [`MAX_SEARCH_RESULTS`]).
    pub fn search(&self, trace: &Trace, query: &str, limit: usize) -> SearchResult {
        let limit = limit.clamp(1, MAX_SEARCH_RESULTS);
        let needle = query.to_lowercase();
        let idx = &self.names;
        let e = &trace.events;
        let mut total = 0u64;
        let mut found: Vec<EventId> = Vec::new();
        for (k, &name) in idx.names.iter().enumerate() {
            if !trace.strings.get(name).to_lowercase().contains(&needle) {
                continue;
            }
            let group = &idx.events[idx.offsets[k] as usize..idx.offsets[k + 1] as usize];
            total += group.len() as u64;
            found.extend(group.iter().take(limit));
            if found.len() > 4 * limit {
                found.sort_by_key(|id| (e.ts_ns[id.index()], id.0));
                found.truncate(limit);
            }
        }
        found.sort_by_key(|id| (e.ts_ns[id.index()], id.0));
        found.truncate(limit);
        let t0 = self.tracks.t0_ns;
        SearchResult {
            matches: found
                .into_iter()
                .map(|id| SearchMatch {
                    event: id.0,
                    track: e.track[id.index()].0,
                    start_ns: e.ts_ns[id.index()] - t0,
                    dur_ns: e.dur_ns.at(id.index()),
                    name: trace.name(id).to_owned(),
                })
                .collect(),
            total,
            truncated: total > limit as u64,
        }
    }
}
