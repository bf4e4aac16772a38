//! A report written as it is made: [`crate::Engine::report_streamed`] hands each trace's
//! report to a [`ReportSink`] in input order, and [`ReportJson`] writes the same JSON
//! text as [`crate::write_json`] of the whole document, one trace at a time, so that a
//! report over thousands of ranks is never held whole.

use std::io::{self, Write};

use kinetoscope_advisor::TraceReport;

use crate::document::{to_json, write_json, InputLayout, ReportDocument};

/// Where [`crate::Engine::report_streamed`] hands each trace's whole report.
pub trait ReportSink {
    /// Called once, just before the first trace: the input's name and layout.
    fn begin(&mut self, input: &str, layout: &InputLayout) -> io::Result<()>;
    /// One trace's whole report (its profile included), in input order.
    fn trace(&mut self, report: &TraceReport) -> io::Result<()>;
}

/// The `traces` key of a report's JSON with no trace, at the top level (two spaces in,
/// on its own line: the one place it can be, since JSON strings hold no raw line break).
const EMPTY_TRACES: &str = "\n  \"traces\": []";

/// A report's JSON written to `out` as it is made: the head and each trace as they
/// come, then the rest from the document [`crate::Engine::report_streamed`] returns
/// ([`ReportJson::finish`]). The text is the same as [`crate::write_json`] of the whole
/// document; an input reported whole (no trace streamed) is written whole by `finish`.
pub struct ReportJson<W: Write> {
    out: W,
    /// Whether the head was written.
    started: bool,
    /// Traces written.
    traces: usize,
}

impl<W: Write> ReportJson<W> {
    /// A writer to `out`.
    pub fn new(out: W) -> Self {
        Self {
            out,
            started: false,
            traces: 0,
        }
    }

    /// Write what follows the traces (or the whole document when none was streamed) and
    /// a final line break; `doc` is left as it was. Returns the writer.
    pub fn finish(mut self, doc: &mut ReportDocument) -> io::Result<W> {
        if !self.started {
            write_json(&mut self.out, doc)?;
        } else {
            let traces = std::mem::take(&mut doc.traces);
            let text = to_json(doc);
            doc.traces = traces;
            let text = text?;
            let at = key_end(&text)?;
            self.out.write_all(b"\n  ]")?;
            self.out.write_all(&text.as_bytes()[at..])?;
        }
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> ReportSink for ReportJson<W> {
    fn begin(&mut self, input: &str, layout: &InputLayout) -> io::Result<()> {
        let head = to_json(&ReportDocument::empty(input.to_owned(), layout.clone()))?;
        // Up to and with the list's `[`.
        let at = key_end(&head)? - 1;
        self.out.write_all(&head.as_bytes()[..at])?;
        self.started = true;
        Ok(())
    }

    fn trace(&mut self, report: &TraceReport) -> io::Result<()> {
        let sep: &[u8] = if self.traces == 0 {
            b"\n    "
        } else {
            b",\n    "
        };
        self.out.write_all(sep)?;
        write_json(Indented(&mut self.out), report)?;
        self.traces += 1;
        Ok(())
    }
}

/// Where the empty `traces` list of a report's JSON text ends.
fn key_end(text: &str) -> io::Result<usize> {
    text.find(EMPTY_TRACES)
        .map(|i| i + EMPTY_TRACES.len())
        .ok_or_else(|| io::Error::other("a report's JSON has no `traces` key"))
}

/// A writer that indents every line after the first by four spaces: a trace's report
/// written at the depth of the document's `traces` list.
struct Indented<W>(W);

impl<W: Write> Write for Indented<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
        while let Some(i) = buf.iter().position(|&b| b == b'\n') {
            self.0.write_all(&buf[..=i])?;
            self.0.write_all(b"    ")?;
            buf = &buf[i + 1..];
        }
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}
