//! What a reader skipped or repaired, counted by kind with the first location, so that
//! nothing is dropped silently.

use serde::{Deserialize, Serialize};

use super::LinkRepairs;

/// A kind of input defect a lenient read gets past.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefectKind {
    /// A `"` inside a name that was not escaped (Kineto before 2026-07); repaired.
    UnescapedQuote,
    /// A bare word such as `N/A`, `nan` or `inf` where a JSON value belongs; read as null.
    BareToken,
    /// A raw control character inside a string; kept as is.
    ControlCharacter,
    /// A negative `dur`; read as 0.
    NegativeDuration,
    /// The file ends inside an event (a truncated write); the partial event is dropped.
    TruncatedTail,
    /// An event that could not be parsed; skipped.
    MalformedEvent,
    /// An event without a usable `ts`; skipped.
    MissingTimestamp,
    /// An element of the event array, or a top-level value, larger than the element
    /// cap (`ReadOptions::max_element_bytes`); streamed past without being kept.
    Oversized,
}

impl DefectKind {
    /// A short human description, plural.
    pub fn describe(self) -> &'static str {
        match self {
            Self::UnescapedQuote => "names with unescaped quotes (repaired)",
            Self::BareToken => "bare tokens such as N/A (read as null)",
            Self::ControlCharacter => "raw control characters in strings (kept)",
            Self::NegativeDuration => "negative durations (read as 0)",
            Self::TruncatedTail => "truncated tail (partial event dropped)",
            Self::MalformedEvent => "malformed events (skipped)",
            Self::MissingTimestamp => "events without a timestamp (skipped)",
            Self::Oversized => "elements over the size cap (skipped; --max-element raises it)",
        }
    }
}

/// One kind of defect with its count and first location.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Defect {
    /// The kind.
    pub kind: DefectKind,
    /// How many times it occurred.
    pub count: u64,
    /// Byte offset (in the decompressed JSON) of the first occurrence.
    pub first_offset: u64,
    /// Index in `traceEvents` of the first occurrence.
    pub first_event_index: u64,
}

/// The reader's account of one file.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReadReport {
    /// Defects, one entry per kind, in the order of [`DefectKind`].
    pub defects: Vec<Defect>,
    /// Bytes of JSON text read (after decompression).
    pub json_bytes: u64,
    /// Bytes of the file on disk.
    pub file_bytes: u64,
    /// Whether the file was gzip-compressed.
    pub gzip: bool,
    /// Elements of `traceEvents` read (events, flows and metadata).
    pub elements: u64,
    /// Launch links (runtime call → operator) whose `External id` could not be taken as
    /// written and were repaired by time nesting.
    pub launch_links: LinkRepairs,
    /// GPU activities (kernels, memcpys, memsets) whose CUPTI `correlation` matches no
    /// runtime call: launched before the profiler window opened (or their launch was
    /// lost). Views that put device time on operators cannot place them; views by kernel
    /// name keep them.
    pub gpu_without_launch: u64,
}

impl ReadReport {
    /// Record `count` occurrences of a defect, keeping the earliest location.
    pub fn add(&mut self, kind: DefectKind, count: u64, offset: u64, event_index: u64) {
        if let Some(d) = self.defects.iter_mut().find(|d| d.kind == kind) {
            d.count += count;
            if offset < d.first_offset {
                d.first_offset = offset;
                d.first_event_index = event_index;
            }
        } else {
            self.defects.push(Defect {
                kind,
                count,
                first_offset: offset,
                first_event_index: event_index,
            });
            self.defects.sort_by_key(|d| d.kind);
        }
    }
}
