//! Telling what a file is from its first bytes, not its name.

/// What the content of a file looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentKind {
    /// gzip-compressed data (`1f 8b`): inflate and look again.
    Gzip,
    /// JSON text starting with `{` or `[`.
    Json,
    /// A Python pickle (protocol 2–5): a CUDA memory snapshot.
    Pickle,
    /// A Python `marshal` dict: a cProfile / pstats file.
    Marshal,
    /// An HTML page (a memory-timeline picture).
    Html,
    /// Nothing at all.
    Empty,
    /// Other binary data.
    Binary,
    /// Other text.
    Text,
}

impl ContentKind {
    /// Classify a file from its first bytes.
    pub fn sniff(head: &[u8]) -> Self {
        if head.is_empty() {
            return Self::Empty;
        }
        if head.starts_with(&[0x1f, 0x8b]) {
            return Self::Gzip;
        }
        if head[0] == 0x80 && head.len() > 1 && (2..=5).contains(&head[1]) {
            return Self::Pickle;
        }
        if head[0] == 0xfb || head.starts_with(b"{(") {
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

    /// A phrase for error messages: "a Python pickle (a CUDA memory snapshot?)".
    pub fn describe(self) -> &'static str {
        match self {
            Self::Gzip => "gzip data",
            Self::Json => "JSON",
            Self::Pickle => {
                "a Python pickle (a CUDA memory snapshot? use `kinetoscope memory FILE`)"
            }
            Self::Marshal => "a Python marshal file (a cProfile/pstats profile)",
            Self::Html => "an HTML page (a memory-timeline picture?)",
            Self::Empty => "an empty file",
            Self::Binary => "binary data",
            Self::Text => "text that is not JSON",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ContentKind::*;
    use super::*;

    #[test]
    fn sniffs_by_content() {
        assert_eq!(ContentKind::sniff(b""), Empty);
        assert_eq!(ContentKind::sniff(b"\n  {\"schemaVersion\": 1"), Json);
        assert_eq!(ContentKind::sniff(&[0x1f, 0x8b, 8, 0]), Gzip);
        assert_eq!(ContentKind::sniff(&[0x80, 0x04, 0x95]), Pickle);
        assert_eq!(ContentKind::sniff(&[0xfb, 0x29]), Marshal);
        assert_eq!(ContentKind::sniff(b"<!DOCTYPE html>"), Html);
        assert_eq!(ContentKind::sniff(&[0x7f, b'E', b'L', b'F', 0, 1]), Binary);
        assert_eq!(ContentKind::sniff(b"hello"), Text);
    }
}
