//! Making a kept event valid JSON again, rewriting only what is wrong: an unescaped `"`
//! inside a name (Kineto before 2026-07) is escaped, a backslash that starts no JSON
//! escape (`C:\Users`) is doubled, a raw control byte in a string becomes `\u00XX`,
//! bytes that are not UTF-8 become U+FFFD, a bare word standing for a value (`N/A`,
//! `nan`) becomes `null`, and a trailing comma before `}` or `]` is dropped.

use kinetoscope_trace::read::lexer::is_json_scalar;

/// Whether `text` is one valid JSON value, by `serde_json`'s judgement (a parser
/// independent of the reader's lenient lexer).
pub fn is_valid_json(text: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok()
}

/// How many of each JSON fix were made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct JsonFixes {
    /// Quotes inside a name escaped.
    pub unescaped_quotes: u64,
    /// Backslashes that started no JSON escape, doubled.
    pub invalid_escapes: u64,
    /// Raw control bytes in strings, written as `\u00XX`.
    pub control_chars: u64,
    /// Bytes that were not UTF-8, written as U+FFFD.
    pub invalid_utf8: u64,
    /// Bare words standing for values, written as `null`.
    pub bare_values: u64,
    /// Trailing commas dropped.
    pub trailing_commas: u64,
}

impl JsonFixes {
    /// Whether no fix was made.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Write `ev` (one event object) into `out` with its JSON defects fixed; `name` is the
/// span of its name's contents relative to `ev` when the reader found an unescaped
/// quote in it. Returns whether anything changed (`out` then differs from `ev`).
pub fn fix_json(
    ev: &[u8],
    name: Option<(usize, usize)>,
    out: &mut Vec<u8>,
    fixes: &mut JsonFixes,
) -> bool {
    out.clear();
    let before = *fixes;
    let n = ev.len();
    let mut i = 0;
    while i < n {
        let b = ev[i];
        if b == b'"' {
            out.push(b'"');
            let inner_quotes_until = name.filter(|(s, _)| *s == i + 1).map(|(_, e)| e);
            i = string(ev, i + 1, inner_quotes_until, out, fixes);
        } else if is_scalar_byte(b) {
            let s = i;
            while i < n && is_scalar_byte(ev[i]) {
                i += 1;
            }
            if is_json_scalar(&ev[s..i]) {
                out.extend_from_slice(&ev[s..i]);
            } else {
                out.extend_from_slice(b"null");
                fixes.bare_values += 1;
            }
        } else if b == b',' && next_closes(ev, i + 1) {
            fixes.trailing_commas += 1;
            i += 1;
        } else {
            out.push(b);
            i += 1;
        }
    }
    *fixes != before
}

/// Copy the string whose contents start at `i` (its closing quote included) into
/// `out`, fixing it; quotes before `inner_quotes_until` are contents. Returns the index
/// after the closing quote.
fn string(
    ev: &[u8],
    mut i: usize,
    inner_quotes_until: Option<usize>,
    out: &mut Vec<u8>,
    fixes: &mut JsonFixes,
) -> usize {
    while i < ev.len() {
        let c = ev[i];
        match c {
            b'"' if inner_quotes_until.is_some_and(|e| i < e) => {
                out.extend_from_slice(b"\\\"");
                fixes.unescaped_quotes += 1;
                i += 1;
            }
            b'"' => {
                out.push(b'"');
                return i + 1;
            }
            b'\\' => {
                let len = escape_len(&ev[i..]);
                if len == 0 {
                    out.extend_from_slice(b"\\\\");
                    fixes.invalid_escapes += 1;
                    i += 1;
                } else {
                    out.extend_from_slice(&ev[i..i + len]);
                    i += len;
                }
            }
            0..=0x1f => {
                out.extend_from_slice(format!("\\u{c:04x}").as_bytes());
                fixes.control_chars += 1;
                i += 1;
            }
            0x20..=0x7f => {
                out.push(c);
                i += 1;
            }
            _ => {
                let len = utf8_len(&ev[i..]);
                if len == 0 {
                    out.extend_from_slice("\u{fffd}".as_bytes());
                    fixes.invalid_utf8 += 1;
                    i += 1;
                } else {
                    out.extend_from_slice(&ev[i..i + len]);
                    i += len;
                }
            }
        }
    }
    i
}

/// The length of the valid JSON escape at the start of `s` (a backslash), or 0.
fn escape_len(s: &[u8]) -> usize {
    match s.get(1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
        Some(b'u') if s.len() >= 6 && s[2..6].iter().all(u8::is_ascii_hexdigit) => 6,
        _ => 0,
    }
}

/// The length of the valid UTF-8 character at the start of `s`, or 0.
fn utf8_len(s: &[u8]) -> usize {
    let want = match s[0] {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return 0,
    };
    match s.get(..want) {
        Some(ch) if std::str::from_utf8(ch).is_ok() => want,
        _ => 0,
    }
}

/// A byte of a number or bare word, as the reader's lexer reads them.
fn is_scalar_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+' | b'/' | b'_')
}

/// Whether the next byte after whitespace closes an object or array.
fn next_closes(ev: &[u8], mut i: usize) -> bool {
    while i < ev.len() && matches!(ev[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    matches!(ev.get(i), Some(b'}' | b']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(ev: &str, name: Option<(usize, usize)>) -> (String, JsonFixes) {
        let mut out = Vec::new();
        let mut f = JsonFixes::default();
        let changed = fix_json(ev.as_bytes(), name, &mut out, &mut f);
        assert_eq!(changed, !f.is_empty());
        (String::from_utf8(out).unwrap(), f)
    }

    #[test]
    fn valid_events_are_copied_unchanged() {
        let ev =
            r#"{"ph": "X", "name": "a\"b\\c\u00e9", "ts": -1.5e3, "args": {"x": [true, null]}}"#;
        let (out, f) = fixed(ev, None);
        assert_eq!(out, ev);
        assert!(f.is_empty());
    }

    #[test]
    fn each_defect_is_fixed_minimally() {
        let ev = "{\"name\": \"f(\"x\")\", \"a\": \"C:\\Users\\t\x01\", \"v\": N/A, \"w\": [1,],}";
        let s = ev.find("f(").unwrap();
        let e = ev.find("\")\"").unwrap() + 2;
        let (out, f) = fixed(ev, Some((s, e)));
        assert_eq!(
            out,
            r#"{"name": "f(\"x\")", "a": "C:\\Users\t\u0001", "v": null, "w": [1]}"#
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["name"], "f(\"x\")");
        assert_eq!(f.unescaped_quotes, 2);
        assert_eq!(f.invalid_escapes, 1);
        assert_eq!(f.control_chars, 1);
        assert_eq!(f.bare_values, 1);
        assert_eq!(f.trailing_commas, 2);
    }

    /// Number-like words that are not JSON numbers are bare values too (the `writers`
    /// fuzz target found a `ts` of `2413669095762.43-` copied as it was).
    #[test]
    fn malformed_numbers_become_null() {
        let ev = r#"{"ts": 2413669095762.43-, "dur": 1.2.3, "x": 01, "y": 1e5}"#;
        let (out, f) = fixed(ev, None);
        assert_eq!(out, r#"{"ts": null, "dur": null, "x": null, "y": 1e5}"#);
        assert_eq!(f.bare_values, 3);
    }
}
