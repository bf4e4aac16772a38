//! Telling what a file is from its first bytes, not its name: [`Magic`] looks at the raw
//! bytes (gzip, pickle, marshal, JSON, ...); [`ContentKind`] at the decompressed text,
//! down to which JSON document it is.

use super::lexer::{LexError, Lexer};

/// What the first bytes of some data are, before looking into JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Magic {
    /// gzip-compressed data (`1f 8b`): inflate and look again.
    Gzip,
    /// JSON text starting with `{` or `[`.
    Json,
    /// A Python pickle (protocol 2–5).
    Pickle,
    /// A Python `marshal` dict (a cProfile / pstats file).
    Marshal,
    /// An HTML page.
    Html,
    /// Nothing at all (or only whitespace).
    Empty,
    /// An SQLite 3 database (`SQLite format 3\0`).
    Sqlite,
    /// Other binary data.
    Binary,
    /// Other text.
    Text,
}

impl Magic {
    /// Classify data from its first bytes.
    pub(crate) fn of(head: &[u8]) -> Self {
        if head.is_empty() {
            return Self::Empty;
        }
        if head.starts_with(&[0x1f, 0x8b]) {
            return Self::Gzip;
        }
        if super::nsys::is_sqlite(head) {
            return Self::Sqlite;
        }
        if head[0] == 0x80 && head.len() > 1 && (2..=5).contains(&head[1]) {
            return Self::Pickle;
        }
        if head[0] == 0xfb
            || (head[0] == b'{' && head.len() > 1 && b"()0\xa8\xa9".contains(&head[1]))
        {
            return Self::Marshal;
        }
        let trimmed = head
            .iter()
            .position(|b| !b" \t\r\n".contains(b) && *b != 0xef && *b != 0xbb && *b != 0xbf)
            .map(|i| &head[i..]);
        match trimmed {
            None => Self::Empty,
            Some(t) if t[0] == b'{' || t[0] == b'[' => Self::Json,
            Some(t)
                if t.len() >= 5
                    && (t[..5].eq_ignore_ascii_case(b"<!doc")
                        || t[..5].eq_ignore_ascii_case(b"<html")) =>
            {
                Self::Html
            }
            Some(t) => {
                let sample = &t[..t.len().min(512)];
                if sample
                    .iter()
                    .any(|&b| b == 0 || (b < 0x20 && !b"\t\r\n".contains(&b)))
                {
                    Self::Binary
                } else {
                    Self::Text
                }
            }
        }
    }
}

/// What an input holds, judged by its content (gzip is inflated first), never its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentKind {
    /// A Kineto Chrome trace: a JSON object with `traceEvents` (or one whose top-level
    /// keys run past the bytes looked at), or a legacy bare array of event objects.
    KinetoTrace,
    /// A profiler memory timeline (`export_memory_timeline`): a JSON array of arrays.
    MemoryTimeline,
    /// A Python pickle: a CUDA memory snapshot (`_dump_snapshot`).
    Snapshot,
    /// A Python `marshal` file: a cProfile / pstats profile.
    Pstats,
    /// A PyTorch execution trace (`ExecutionTraceObserver`): a JSON object with `schema`
    /// and `nodes`.
    ExecutionTrace,
    /// An SQLite database: an Nsight Systems export (`nsys export --type sqlite`) when
    /// it has the nsys tables, which the reader checks.
    NsysExport,
    /// An HTML page (a memory-timeline picture).
    Html,
    /// Nothing at all.
    Empty,
    /// Other binary data.
    Binary,
    /// JSON that is none of the above.
    OtherJson,
    /// A `key_averages()` table printed by PyTorch (fixed-width text).
    KeyAveragesTable,
    /// Text that is not JSON.
    Text,
}

impl ContentKind {
    /// Classify decompressed text from its first bytes (any number; the more, the
    /// surer the JSON cases).
    pub(crate) fn of_text(head: &[u8]) -> Self {
        match Magic::of(head) {
            Magic::Json => json_kind(head),
            Magic::Pickle => Self::Snapshot,
            Magic::Marshal => Self::Pstats,
            Magic::Html => Self::Html,
            Magic::Empty => Self::Empty,
            Magic::Sqlite => Self::NsysExport,
            Magic::Gzip | Magic::Binary => Self::Binary,
            Magic::Text if super::key_averages::looks_like_table(head) => Self::KeyAveragesTable,
            Magic::Text => Self::Text,
        }
    }

    /// A phrase for error messages: "a Python pickle (a CUDA memory snapshot?)". What to
    /// run instead is the front end's hint, not the reader's.
    pub fn describe(self) -> &'static str {
        match self {
            Self::KinetoTrace => "a Kineto Chrome trace (JSON)",
            Self::MemoryTimeline => "a profiler memory timeline (JSON)",
            Self::Snapshot => "a Python pickle (a CUDA memory snapshot?)",
            Self::Pstats => "a Python marshal file (a cProfile/pstats profile)",
            Self::ExecutionTrace => "a PyTorch execution trace (ExecutionTraceObserver JSON)",
            Self::NsysExport => "an SQLite database (an Nsight Systems export?)",
            Self::Html => "an HTML page (a memory-timeline picture?)",
            Self::Empty => "an empty file",
            Self::Binary => "binary data",
            Self::OtherJson => "JSON",
            Self::KeyAveragesTable => "a PyTorch key_averages table (text)",
            Self::Text => "text that is not JSON",
        }
    }
}

/// Which JSON document `head` starts: decided by the first top-level bytes and keys.
/// Anything undecided within `head` (a long value, malformed text) is a Kineto trace, so
/// that the Kineto reader, which reads on, decides and reports where it fails.
fn json_kind(head: &[u8]) -> ContentKind {
    let mut lx = Lexer::new(head, 0);
    if head.starts_with(&[0xef, 0xbb, 0xbf]) {
        lx.pos = 3;
    }
    match lx.peek() {
        Ok(b'[') => {
            lx.pos += 1;
            return match lx.peek() {
                Ok(b'[') => ContentKind::MemoryTimeline,
                Ok(b'{' | b']') | Err(LexError::Eof) => ContentKind::KinetoTrace,
                _ => ContentKind::OtherJson,
            };
        }
        Ok(b'{') => lx.pos += 1,
        _ => return ContentKind::KinetoTrace,
    }
    let (mut schema, mut nodes) = (false, false);
    loop {
        match lx.peek() {
            Ok(b'}') if schema && nodes => return ContentKind::ExecutionTrace,
            Ok(b'}') => return ContentKind::OtherJson,
            Ok(b',') => {
                lx.pos += 1;
                continue;
            }
            Ok(_) => {}
            Err(_) => return ContentKind::KinetoTrace,
        }
        let Ok(key) = lx.string() else {
            return ContentKind::KinetoTrace;
        };
        match &head[key.start..key.end] {
            b"traceEvents" => return ContentKind::KinetoTrace,
            b"schema" => schema = true,
            b"nodes" => nodes = true,
            _ => {}
        }
        if schema && nodes {
            return ContentKind::ExecutionTrace;
        }
        let mut bare = false;
        if lx.expect(b':', "").is_err() || lx.skip_value(&mut bare).is_err() {
            return ContentKind::KinetoTrace;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ContentKind as K;
    use super::*;

    #[test]
    fn magic_by_content() {
        assert_eq!(Magic::of(b""), Magic::Empty);
        assert_eq!(Magic::of(b"\n  {\"schemaVersion\": 1"), Magic::Json);
        assert_eq!(Magic::of(&[0x1f, 0x8b, 8, 0]), Magic::Gzip);
        assert_eq!(Magic::of(&[0x80, 0x04, 0x95]), Magic::Pickle);
        assert_eq!(Magic::of(&[0xfb, 0x29]), Magic::Marshal);
        assert_eq!(Magic::of(b"<!DOCTYPE html>"), Magic::Html);
        assert_eq!(Magic::of(&[0x7f, b'E', b'L', b'F', 0, 1]), Magic::Binary);
        assert_eq!(Magic::of(b"hello"), Magic::Text);
    }

    #[test]
    fn json_documents() {
        let kind = |t: &str| ContentKind::of_text(t.as_bytes());
        assert_eq!(
            kind("{\"schemaVersion\": 1, \"traceEvents\": ["),
            K::KinetoTrace
        );
        assert_eq!(kind("\u{feff}{\"traceEvents\": []}"), K::KinetoTrace);
        // Undecided within the head: the Kineto reader decides.
        assert_eq!(kind("{\"deviceProperties\": [{\"id\": 0"), K::KinetoTrace);
        assert_eq!(kind("{\"a\" 1}"), K::KinetoTrace);
        assert_eq!(kind("[{\"ph\": \"X\""), K::KinetoTrace);
        assert_eq!(kind("[ ]"), K::KinetoTrace);
        assert_eq!(kind(" [ [1, 2"), K::MemoryTimeline);
        assert_eq!(kind("[1, 2]"), K::OtherJson);
        assert_eq!(kind("{\"a\": {\"b\": [1]}, \"c\": \"d\"}"), K::OtherJson);
        assert_eq!(
            kind("{\n  \"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": [{\"name\""),
            K::ExecutionTrace
        );
        assert_eq!(kind(""), K::Empty);
        assert_eq!(kind("hello"), K::Text);
        assert_eq!(ContentKind::of_text(&[0x80, 0x04, 0x95]), K::Snapshot);
        assert_eq!(ContentKind::of_text(&[0xfb, 0x29]), K::Pstats);
        assert_eq!(kind("<html>"), K::Html);
        assert_eq!(ContentKind::of_text(&[0x1f, 0x8b, 8, 0]), K::Binary);
    }
}
