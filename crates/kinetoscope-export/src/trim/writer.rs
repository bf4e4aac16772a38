//! Writing the trimmed trace: the input's text before the event array, the kept
//! elements joined by `,\n` (each its original bytes unless a repair rewrote it:
//! [`super::valid`], [`super::overlap`]), the
//! threads added for moved slices, and the input's text from the array's `]` on (the
//! text around the array valid JSON: [`super::frame`]).

use std::io::{self, Write};

use kinetoscope_trace::read::spans::value_range;

use super::frame::frame;
use super::overlap::{Edit, Overlaps};
use super::repair::JsonFixes;
use super::select::Records;
use super::valid::Fixed;

/// What the writer wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// Elements written (metadata added included).
    pub elements: u64,
    /// Elements whose bytes differ from the input's.
    pub rewritten: u64,
    /// The JSON fixes made.
    pub json: JsonFixes,
    /// Top-level members before or after the event array dropped (not valid JSON even
    /// fixed, or cut short).
    pub members_dropped: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Write the trimmed trace into `out`.
pub fn write(
    text: &[u8],
    recs: &Records<'_>,
    keep: &[bool],
    fixed: &Fixed,
    overlaps: &Overlaps,
    out: &mut dyn Write,
) -> io::Result<Written> {
    let mut out = Counting {
        inner: out,
        bytes: 0,
    };
    let mut w = Written {
        json: fixed.fixes,
        ..Written::default()
    };
    let frame = frame(recs.prefix, recs.suffix, recs.bare, &mut w.json);
    w.members_dropped = frame.members_dropped;
    out.write_all(&frame.prefix)?;
    let mut edited = Vec::new();
    let mut first = true;
    let mut sep = |out: &mut Counting<'_>| -> io::Result<()> {
        if !std::mem::take(&mut first) {
            out.write_all(b",\n")?;
        }
        Ok(())
    };
    for (i, r) in recs.items.iter().enumerate().filter(|(i, _)| keep[*i]) {
        let original = &text[r.start..r.end];
        let mut bytes = fixed.bytes.get(&i).map_or(original, Vec::as_slice);
        if let Some(edit) = overlaps.edits.get(&i) {
            apply(bytes, edit, &mut edited);
            bytes = &edited;
        }
        sep(&mut out)?;
        out.write_all(bytes)?;
        w.elements += 1;
        w.rewritten += u64::from(bytes != original);
    }
    for t in &overlaps.threads {
        let like = &recs.items[t.like];
        let ev = &text[like.start..like.end];
        let pid = value_range(ev, "pid").map_or(&b"0"[..], |(s, e)| &ev[s..e]);
        sep(&mut out)?;
        out.write_all(b"{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": ")?;
        out.write_all(pid)?;
        write!(out, ", \"tid\": {}, \"args\": {{\"name\": \"", t.tid)?;
        out.write_all(&t.name)?;
        out.write_all(b"\"}}")?;
        w.elements += 1;
    }
    out.write_all(b"\n")?;
    out.write_all(&frame.suffix)?;
    w.bytes = out.bytes;
    Ok(w)
}

/// `ev` with its `tid` and `dur` values replaced as `edit` says, into `out`.
fn apply(ev: &[u8], edit: &Edit, out: &mut Vec<u8>) {
    let mut splices: Vec<((usize, usize), Vec<u8>)> = Vec::new();
    if let (Some(tid), Some(r)) = (edit.tid, value_range(ev, "tid")) {
        splices.push((r, tid.to_string().into_bytes()));
    }
    if let (Some(dur), Some(r)) = (edit.dur_ns, value_range(ev, "dur")) {
        splices.push((r, micros(dur).into_bytes()));
    }
    splices.sort_by_key(|(r, _)| r.0);
    out.clear();
    let mut at = 0;
    for ((s, e), with) in splices {
        out.extend_from_slice(&ev[at..s]);
        out.extend_from_slice(&with);
        at = e;
    }
    out.extend_from_slice(&ev[at..]);
}

/// Nanoseconds as Kineto's microseconds: `12`, `12.5`, `12.345`.
fn micros(ns: i64) -> String {
    let (whole, frac) = (ns / 1000, ns % 1000);
    if frac == 0 {
        return whole.to_string();
    }
    let f = format!("{frac:03}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}

/// A writer counting the bytes through it.
struct Counting<'a> {
    inner: &'a mut dyn Write,
    bytes: u64,
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_replace_only_their_values() {
        let ev = br#"{"ph": "X", "tid": "7", "ts": 1, "dur": 2.5, "args": {"tid": 1}}"#;
        let mut out = Vec::new();
        let edit = Edit {
            tid: Some(9),
            dur_ns: Some(1_250),
        };
        apply(ev, &edit, &mut out);
        assert_eq!(
            out,
            br#"{"ph": "X", "tid": 9, "ts": 1, "dur": 1.25, "args": {"tid": 1}}"#
        );
        assert_eq!(micros(12_000), "12");
        assert_eq!(micros(12_345), "12.345");
    }
}
