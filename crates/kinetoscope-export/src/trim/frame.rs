//! The text around the event array: the top-level members before `traceEvents` (the
//! header: `schemaVersion`, `deviceProperties`, …) and those after its `]` (the trailer:
//! `traceName`, `baseTimeNanoseconds`, …), written so that the output is valid JSON.
//!
//! Both are kept byte for byte when they are valid once the events' JSON fixes
//! ([`fix_json`]) are made. Otherwise they are rebuilt from their members: each member
//! that is valid JSON once fixed is kept, the rest are dropped and counted. A trailer
//! cut short (a file truncated after the array closed) keeps its whole members and is
//! closed with `}`. "Valid" is `serde_json`'s judgement, a parser independent of the
//! reader's lenient lexer.

use kinetoscope_trace::read::lexer::{LexError, Lexer};

use super::repair::{fix_json, is_valid_json as valid, JsonFixes};

/// The header and trailer as written.
#[derive(Debug, Default)]
pub struct Frame {
    /// From the start to the event array's `[` included.
    pub prefix: Vec<u8>,
    /// From the event array's `]` to the end.
    pub suffix: Vec<u8>,
    /// Top-level members dropped because they were not valid JSON, even fixed, or were
    /// cut short.
    pub members_dropped: u64,
}

/// The frame of a trace whose text before the first element is `prefix` and from the
/// array's `]` on is `suffix` (`None`: the text ended inside the array). `bare`: the
/// trace is a bare array of events. JSON fixes are counted into `fixes`.
pub fn frame(prefix: &[u8], suffix: Option<&[u8]>, bare: bool, fixes: &mut JsonFixes) -> Frame {
    let mut f = Frame::default();
    let (close, open): (&[u8], &[u8]) = if bare {
        (b"]", b"[")
    } else {
        (b"]}", b"{\"traceEvents\": [")
    };
    f.prefix = match as_is(prefix, |t| [t, close].concat(), fixes) {
        Some(p) => p,
        None if bare => b"[".to_vec(),
        None => header(prefix, fixes, &mut f.members_dropped),
    };
    f.suffix = match suffix.map(|s| (s, as_is(s, |t| [open, t].concat(), fixes))) {
        Some((_, Some(s))) => s,
        None | Some((_, None)) if bare => b"]\n".to_vec(),
        Some((s, None)) => trailer(s, fixes, &mut f.members_dropped),
        None => b"]}\n".to_vec(),
    };
    f
}

/// `text` with its JSON fixes made (counted into `fixes`) when that is valid once
/// `whole` completes it into a document; `None` otherwise (nothing counted).
fn as_is(text: &[u8], whole: impl Fn(&[u8]) -> Vec<u8>, fixes: &mut JsonFixes) -> Option<Vec<u8>> {
    let mut trial = *fixes;
    let t = fixed(text, &mut trial);
    valid(&whole(&t)).then(|| {
        *fixes = trial;
        t
    })
}

/// `text` with its JSON fixes made (counted into `fixes`).
fn fixed(text: &[u8], fixes: &mut JsonFixes) -> Vec<u8> {
    let mut out = Vec::new();
    if !fix_json(text, None, &mut out, fixes) {
        out.clear();
        out.extend_from_slice(text);
    }
    out
}

/// The header rebuilt from its valid members, ending with `"traceEvents": [`.
fn header(prefix: &[u8], fixes: &mut JsonFixes, dropped: &mut u64) -> Vec<u8> {
    let mut out = b"{".to_vec();
    let mut members = Members::after(prefix, b'{');
    for m in members.by_ref() {
        keep_member(&mut out, m, fixes, dropped);
    }
    *dropped += u64::from(members.broken);
    if out.len() > 1 {
        out.push(b',');
    }
    out.extend_from_slice(b"\n  \"traceEvents\": [");
    out
}

/// The trailer rebuilt from its valid members, from the array's `]` to the object's `}`.
fn trailer(suffix: &[u8], fixes: &mut JsonFixes, dropped: &mut u64) -> Vec<u8> {
    let mut out = b"]".to_vec();
    let mut members = Members::after(suffix, b']');
    for m in members.by_ref() {
        let mut one = Vec::new();
        keep_member(&mut one, m, fixes, dropped);
        if !one.is_empty() {
            out.push(b',');
            out.extend_from_slice(&one);
        }
    }
    *dropped += u64::from(members.broken);
    out.extend_from_slice(b"\n}\n");
    out
}

/// Append `member` (`"key": value`, fixed) to `out` after a comma when `out` holds one
/// already, if it is valid JSON; else count it dropped.
fn keep_member(out: &mut Vec<u8>, member: &[u8], fixes: &mut JsonFixes, dropped: &mut u64) {
    let mut trial = *fixes;
    let m = fixed(member, &mut trial);
    if !valid(&[b"{", &m[..], b"}"].concat()) {
        *dropped += 1;
        return;
    }
    *fixes = trial;
    if out.len() > 1 {
        out.push(b',');
    }
    out.extend_from_slice(b"\n  ");
    out.extend_from_slice(&m);
}

/// The top-level members (`"key": value`) of a header or trailer, in order, up to the
/// event array's key (header), the object's end, or the first one that cannot be
/// delimited.
struct Members<'a> {
    text: &'a [u8],
    pos: usize,
    done: bool,
    /// Whether the walk stopped at a member it could not delimit (cut short, or not a
    /// member at all).
    broken: bool,
}

impl<'a> Members<'a> {
    /// The members after the first `open` byte of `text` (`{` for a header, `]` for a
    /// trailer).
    fn after(text: &'a [u8], open: u8) -> Self {
        let at = text.iter().position(|&b| b == open);
        Self {
            text,
            pos: at.map_or(text.len(), |p| p + 1),
            done: at.is_none(),
            broken: false,
        }
    }

    /// The next member's span, or why the walk ends (`None`: cleanly).
    fn member(&mut self) -> Result<Option<(usize, usize)>, LexError> {
        let mut lx = Lexer::new(self.text, self.pos);
        loop {
            match lx.peek() {
                Ok(b',') => lx.pos += 1,
                Ok(b'}' | b']') | Err(LexError::Eof) => return Ok(None),
                Ok(_) => break,
                Err(e) => return Err(e),
            }
        }
        let start = lx.pos;
        let key = lx.string()?;
        if &self.text[key.start..key.end] == b"traceEvents" {
            return Ok(None);
        }
        lx.expect(b':', "expected ':'")?;
        let (_, end) = lx.skip_value(&mut false)?;
        // Whole only when something follows: a number at the very end may be cut short.
        lx.peek()?;
        self.pos = end;
        Ok(Some((start, end)))
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.done {
            return None;
        }
        match self.member() {
            Ok(Some((s, e))) => Some(&self.text[s..e]),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(_) => {
                self.done = true;
                self.broken = true;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(prefix: &str, suffix: Option<&str>) -> (String, String, u64) {
        let mut fixes = JsonFixes::default();
        let f = frame(
            prefix.as_bytes(),
            suffix.map(str::as_bytes),
            false,
            &mut fixes,
        );
        let text = format!(
            "{}{}",
            String::from_utf8(f.prefix.clone()).unwrap(),
            String::from_utf8(f.suffix.clone()).unwrap()
        );
        assert!(valid(text.as_bytes()), "{text}");
        (
            String::from_utf8(f.prefix).unwrap(),
            String::from_utf8(f.suffix).unwrap(),
            f.members_dropped,
        )
    }

    #[test]
    fn a_valid_frame_is_kept_byte_for_byte() {
        let prefix = "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [";
        let suffix = "],\n  \"traceName\": \"x\"\n}\n";
        assert_eq!(
            written(prefix, Some(suffix)),
            (prefix.into(), suffix.into(), 0)
        );
    }

    #[test]
    fn a_trailer_cut_short_keeps_its_whole_members() {
        let prefix = "{\"traceEvents\": [";
        let (_, suffix, dropped) = written(
            prefix,
            Some("],\n  \"baseTimeNanoseconds\": 17,\n  \"INFO\": [\"a\", \"b"),
        );
        assert_eq!(suffix, "],\n  \"baseTimeNanoseconds\": 17\n}\n");
        assert_eq!(dropped, 1);
        let (_, suffix, dropped) = written(
            prefix,
            Some("],\n  \"traceName\": \"t\",\n  \"baseTimeNanoseconds\": 17"),
        );
        assert_eq!(
            suffix, "],\n  \"traceName\": \"t\"\n}\n",
            "a number at the end may be cut"
        );
        assert_eq!(dropped, 1);
        let (_, suffix, dropped) = written(prefix, Some("],\n  \"traceN"));
        assert_eq!((suffix.as_str(), dropped), ("]\n}\n", 1));
        let (_, suffix, dropped) = written(prefix, Some("]"));
        assert_eq!((suffix.as_str(), dropped), ("]\n}\n", 0));
    }

    #[test]
    fn members_are_fixed_and_unfixable_ones_dropped() {
        // A raw control byte is fixed in place; the whole frame then stays as it was.
        let (prefix, _, dropped) = written(
            "{\"deviceProperties\": [{\"name\": \"A\u{1}\"}], \"traceEvents\": [",
            Some("]}"),
        );
        assert_eq!(
            prefix,
            "{\"deviceProperties\": [{\"name\": \"A\\u0001\"}], \"traceEvents\": ["
        );
        assert_eq!(dropped, 0);
        // A value the fixes cannot mend (an object whose key is not a string) is dropped
        // with its member; the others stay.
        let (prefix, suffix, dropped) = written(
            "{\"schemaVersion\": 1, \"bad\": {1: 2}, \"traceEvents\": [",
            Some("], \"worse\": [1 2], \"traceName\": \"t\"}"),
        );
        assert_eq!(prefix, "{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [");
        assert_eq!(suffix, "],\n  \"traceName\": \"t\"\n}\n");
        assert_eq!(dropped, 2);
    }
}
