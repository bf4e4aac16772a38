//! The JSON writer behind [`crate::to_json`]: pretty JSON whose strings carry no
//! character that a terminal acts on. `serde_json` already escapes C0 controls; this
//! also writes DEL, C1 controls, bidirectional formatting characters and U+2028/U+2029
//! as `\uNNNN`, which JSON reads back as the same characters, so the document is
//! unchanged for any parser and safe to print.

use std::io::{self, Write};

use serde_json::ser::{Formatter, PrettyFormatter};

/// Whether `c` must never reach a terminal raw: a C0 control, DEL, a C1 control, or a
/// bidirectional formatting character (embeddings, overrides, isolates and marks),
/// which reorder what a terminal shows. The one definition the renderers' sanitiser
/// (`kinetoscope_report::sanitize`) and the JSON writer share.
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// The length of the leading run of `bytes` that is printable ASCII (space to `~`),
/// newlines included when `newline`: text no sanitiser needs to look at. Checked 16
/// bytes at a time, so long clean text costs little.
pub fn plain_prefix_len(bytes: &[u8], newline: bool) -> usize {
    let plain = |b: u8| (b' '..0x7f).contains(&b) | (newline & (b == b'\n'));
    let mut i = 0;
    for chunk in bytes.chunks_exact(16) {
        if !chunk.iter().fold(true, |ok, &b| ok & plain(b)) {
            break;
        }
        i += 16;
    }
    i + bytes[i..]
        .iter()
        .position(|&b| !plain(b))
        .unwrap_or(bytes.len() - i)
}

/// [`PrettyFormatter`], with unsafe characters in strings written as `\uNNNN`.
pub(crate) struct SafeFormatter(PrettyFormatter<'static>);

impl SafeFormatter {
    /// Two-space indentation, like `serde_json::to_string_pretty`.
    pub(crate) fn new() -> Self {
        Self(PrettyFormatter::new())
    }
}

/// Whether a string character needs a `\u` escape beyond what `serde_json` does.
fn escaped(c: char) -> bool {
    is_unsafe_char(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Write a string fragment with unsafe characters as `\uNNNN` escapes.
fn write_safe_fragment<W: ?Sized + Write>(writer: &mut W, fragment: &str) -> io::Result<()> {
    // Fast path: plain ASCII needs nothing (serde_json escapes C0 controls itself).
    let first = plain_prefix_len(fragment.as_bytes(), false);
    if first == fragment.len() {
        return writer.write_all(fragment.as_bytes());
    }
    writer.write_all(&fragment.as_bytes()[..first])?;
    let mut rest = &fragment[first..];
    while let Some(i) = rest.find(escaped) {
        writer.write_all(&rest.as_bytes()[..i])?;
        let c = rest[i..].chars().next().unwrap_or_default();
        write!(writer, "\\u{:04x}", c as u32)?;
        rest = &rest[i + c.len_utf8()..];
    }
    writer.write_all(rest.as_bytes())
}

/// The compact formatter (no whitespace), with unsafe characters in strings written as
/// `\uNNNN`.
pub(crate) struct SafeCompactFormatter;

impl Formatter for SafeCompactFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_safe_fragment(writer, fragment)
    }
}

impl Formatter for SafeFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        write_safe_fragment(writer, fragment)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn plain_prefix_stops_at_the_first_other_byte() {
        use super::plain_prefix_len;
        let long = "a".repeat(40);
        assert_eq!(plain_prefix_len(long.as_bytes(), false), 40);
        for at in [0, 7, 16, 33, 39] {
            for odd in ["\n", "\u{7f}", "é", "\u{1b}"] {
                let mut s = long.clone();
                s.replace_range(at..at + 1, odd);
                assert_eq!(plain_prefix_len(s.as_bytes(), false), at, "{s:?}");
                let with_newline = if odd == "\n" { 40 } else { at };
                assert_eq!(plain_prefix_len(s.as_bytes(), true), with_newline, "{s:?}");
            }
        }
        assert_eq!(plain_prefix_len(b"", true), 0);
    }

    #[test]
    fn strings_carry_no_raw_control_and_read_back_the_same() {
        let name = "a\u{1b}[31m\u{7}\0\r\u{7f}\u{9b}\u{202e}\u{2066}\u{2028}é日";
        let value = json!({ "name": name, "list": [name, 1, null], "empty": {} });
        let text = crate::to_json(&value).expect("serialise");
        assert!(
            !text.chars().any(|c| super::escaped(c) && c != '\n'),
            "{text}"
        );
        assert!(text.contains(r"\u001b[31m\u0007\u0000\r\u007f\u009b\u202e\u2066\u2028é日"));
        let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back, value);
        let plain = json!({ "a": [1, 2], "b": { "c": "d" } });
        assert_eq!(
            crate::to_json(&plain).expect("serialise"),
            serde_json::to_string_pretty(&plain).expect("serialise")
        );
    }
}
