//! The one sanitiser of text bound for a terminal or a spreadsheet. Names in a trace
//! (operators, kernels, devices, threads) and file names are untrusted: they may carry
//! ANSI escape sequences, OSC 52 (which writes the user's clipboard), BEL, NUL, CR or
//! bidirectional overrides. Every table cell, message, error, hint, note and progress
//! line goes through [`inline`] or [`text`], which write such characters visibly
//! (`\x1b`, `\u202e`) instead; CSV cells go through [`csv_cell`], which also defuses
//! spreadsheet formulas. JSON is escaped by its own writer (`kinetoscope_engine::to_json`).

use std::borrow::Cow;
use std::fmt::Write;

use kinetoscope_engine::plain_prefix_len;

/// Whether `c` must not reach a terminal raw: a C0 or C1 control, DEL, or a
/// bidirectional formatting character (the definition JSON output shares).
pub use kinetoscope_engine::is_unsafe_char as is_unsafe;

/// Whether [`text`] would write `c` visibly: [`is_unsafe`], but newline.
pub fn is_unsafe_in_text(c: char) -> bool {
    is_unsafe(c) && c != '\n'
}

/// `s` on one line: every unsafe character, newline and tab included, written visibly
/// (`\x1b`, `\x0a`, `\u202e`). For table cells, names and anything else that must not
/// break a line.
pub fn inline(s: &str) -> Cow<'_, str> {
    escape(s, is_unsafe)
}

/// `s` as laid-out text: every unsafe character but newline written visibly. For a
/// rendered report, a table cell of several lines and messages, whose own line breaks
/// are kept (a name with a line break in it then takes two lines, nothing more).
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, is_unsafe_in_text)
}

/// One CSV cell of text: a cell a spreadsheet would run as a formula (it starts with
/// `=`, `+`, `-`, `@`, tab or CR and is not a number) gets a `'` in front, then the
/// cell is made [`inline`]. Quoting is the CSV writer's.
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number(s);
    match (formula, inline(s)) {
        (false, cell) => cell,
        (true, cell) => Cow::Owned(format!("'{cell}")),
    }
}

/// Whether `s` is a plain decimal number (`-12`, `+3.5`, `1e-3`), which spreadsheets
/// read as a value, not a formula.
fn is_number(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = !(int.is_empty() && frac.is_empty()) && digits(int) && digits(frac);
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// `s` with every `bad` character written as `\xNN` (up to U+00FF) or `\uNNNN`;
/// borrowed when there is none.
fn escape(s: &str, bad: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some(first) = first_bad(s, &bad) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if !bad(c) {
            out.push(c);
        } else if (c as u32) <= 0xff {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
    }
    Cow::Owned(out)
}

/// Where the first `bad` character of `s` is. Printable ASCII (and newlines, when they
/// are not bad) is passed over in bulk; other characters are decoded and tested.
fn first_bad(s: &str, bad: &impl Fn(char) -> bool) -> Option<usize> {
    let newline_ok = !bad('\n');
    let mut i = 0;
    while i < s.len() {
        i += plain_prefix_len(&s.as_bytes()[i..], newline_ok);
        let c = s[i..].chars().next()?;
        if bad(c) {
            return Some(i);
        }
        i += c.len_utf8();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hostile strings of the suite: CSI colour, OSC 52 ending in BEL, NUL, CR, a
    /// C1 CSI, DEL and a right-to-left override.
    const HOSTILE: &str = "a\u{1b}[31mb\u{1b}]52;c;aGk=\u{7}c\0d\re\u{9b}f\u{7f}g\u{202e}h";

    #[test]
    fn inline_shows_every_control_visibly() {
        let s = inline(HOSTILE);
        assert_eq!(
            s,
            "a\\x1b[31mb\\x1b]52;c;aGk=\\x07c\\x00d\\x0de\\x9bf\\x7fg\\u202eh"
        );
        assert!(!s.chars().any(is_unsafe));
        assert_eq!(inline("line\nnext\ttab"), "line\\x0anext\\x09tab");
        assert_eq!(
            inline("\u{2066}x\u{2069}\u{200f}"),
            "\\u2066x\\u2069\\u200f"
        );
    }

    #[test]
    fn text_keeps_line_breaks_only() {
        assert_eq!(text("a\nb\tc\r\n"), "a\nb\\x09c\\x0d\n");
        assert_eq!(text(HOSTILE), inline(HOSTILE));
        let long = format!("{}é\n{}\u{202e}", "x".repeat(40), "y".repeat(20));
        assert_eq!(text(&long), long.replace('\u{202e}', "\\u202e"));
        assert_eq!(
            inline(&long),
            long.replace('\u{202e}', "\\u202e").replace('\n', "\\x0a")
        );
    }

    #[test]
    fn clean_text_is_borrowed_and_unchanged() {
        let clean = "aten::mm · 1.5 KiB — ümlaut 日本";
        assert!(matches!(inline(clean), Cow::Borrowed(_)));
        assert!(matches!(text(clean), Cow::Borrowed(_)));
        assert!(matches!(csv_cell(clean), Cow::Borrowed(_)));
    }

    #[test]
    fn csv_cells_that_look_like_formulas_are_prefixed() {
        for f in [
            "=1+2",
            "+cmd|' /C calc'!A0",
            "-2+3",
            "@SUM(A1)",
            "=HYPERLINK(\"x\")",
        ] {
            assert_eq!(csv_cell(f), format!("'{f}"), "{f}");
        }
        assert_eq!(csv_cell("\tx"), "'\\x09x");
        assert_eq!(csv_cell("\r=1"), "'\\x0d=1");
        for n in ["-5", "+3.25", "-0.5e-3", "1E9", "12", "-.5", "7."] {
            assert_eq!(csv_cell(n), n, "{n}");
        }
        for not_n in ["-", "+", "-e5", "-1e", "-inf", "-NaN", "-1.2.3", "--1"] {
            assert_eq!(csv_cell(not_n), format!("'{not_n}"), "{not_n}");
        }
        assert_eq!(csv_cell("a=b"), "a=b");
    }
}
