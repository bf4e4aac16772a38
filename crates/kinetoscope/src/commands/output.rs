//! The one render path every command uses: a document becomes a terminal table, CSV or
//! JSON text, goes to stdout (a closed pipe is not an error), and the exit status says
//! whether some traces could not be read. Everything written to stdout or stderr goes
//! through the sanitiser (`kinetoscope_report::sanitize`): no control character from a
//! trace or a file name reaches the terminal raw.

use std::io::Write;
use std::process::ExitCode;

use kinetoscope_engine::{Document, ReadFailure, SkippedFile};
use kinetoscope_report::sanitize;
use serde::Serialize;

use crate::args::ViewFormat;

/// Write `text` to stdout, sanitised (its line breaks and tabs kept); a closed pipe
/// (`| head`) is not an error.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    let text = sanitize::text(text);
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// Write `doc` as JSON to stdout (with a final line break), serialised straight into it
/// so that a large document is never also held as text. Its strings hold no raw control
/// or bidirectional character (`kinetoscope_engine::write_json`), so it needs no
/// sanitising; a closed pipe is not an error.
pub fn write_json_stdout<D: Serialize>(doc: &D) -> anyhow::Result<()> {
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, Stdout::new());
    kinetoscope_engine::write_json(&mut stdout, doc)
        .map_err(std::io::Error::from)
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush())?;
    Ok(())
}

/// Standard output for text that needs no sanitising (JSON from the engine's writer):
/// once the reader has gone (`| head`), the rest is dropped without an error.
pub struct Stdout {
    out: std::io::StdoutLock<'static>,
    closed: bool,
}

impl Stdout {
    /// Standard output, locked.
    pub fn new() -> Self {
        Self {
            out: std::io::stdout().lock(),
            closed: false,
        }
    }

    /// `result`, with a closed pipe marking the rest to be dropped instead of failing.
    fn unless_closed(&mut self, result: std::io::Result<()>) -> std::io::Result<()> {
        match result {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.out.write_all(buf);
        self.unless_closed(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.out.flush();
        self.unless_closed(r)
    }
}

/// Write one message to stderr, sanitised (a closed stderr is ignored).
pub fn message(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{}", sanitize::text(line));
}

/// Tell stderr which special files of the input folder were skipped (every format; JSON
/// also lists them in the document's `skipped`).
pub fn note_skipped(skipped: &[SkippedFile]) {
    for s in skipped {
        message(&format!("note: {}", kinetoscope_report::note::skipped(s)));
    }
}

/// A document's CSV form, for the views that have one.
pub type CsvOf<'a, D> = Option<&'a dyn Fn(&D) -> String>;

/// A document's text in `format`: `table` for the terminal, `csv` when the view has a
/// CSV form (else CSV is refused with the formats it has), JSON by serialising the
/// document itself.
pub fn render<D: Serialize>(
    doc: &D,
    format: ViewFormat,
    table: impl FnOnce(&D) -> String,
    csv: CsvOf<'_, D>,
) -> anyhow::Result<String> {
    Ok(match format {
        ViewFormat::Table => table(doc),
        ViewFormat::Json => kinetoscope_engine::to_json(doc)? + "\n",
        ViewFormat::Csv => match csv {
            Some(f) => f(doc),
            None => {
                anyhow::bail!("CSV is not available for this input; use --format table or json")
            }
        },
    })
}

/// Write `text`, then the exit status: 2 when some traces could not be read (each is
/// named on stderr when the format has no place for it), else success.
pub fn finish(text: &str, format: ViewFormat, errors: &[ReadFailure]) -> anyhow::Result<ExitCode> {
    write_stdout(text)?;
    if format == ViewFormat::Csv {
        for e in errors {
            message(&format!("error: {}: {}", e.path, e.error));
        }
    }
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// Note `doc`'s skipped files on stderr, then write it in `format` ([`emit`]).
pub fn emit_document<T, X>(
    doc: &Document<T, X>,
    format: ViewFormat,
    table: impl FnOnce(&Document<T, X>) -> String,
    csv: CsvOf<'_, Document<T, X>>,
) -> anyhow::Result<ExitCode>
where
    Document<T, X>: Serialize,
{
    note_skipped(&doc.skipped);
    emit(doc, &doc.errors, format, table, csv)
}

/// [`render`] then [`finish`].
pub fn emit<D: Serialize>(
    doc: &D,
    errors: &[ReadFailure],
    format: ViewFormat,
    table: impl FnOnce(&D) -> String,
    csv: CsvOf<'_, D>,
) -> anyhow::Result<ExitCode> {
    if format == ViewFormat::Json {
        write_json_stdout(doc)?;
        return finish("", format, errors);
    }
    let text = render(doc, format, table, csv)?;
    finish(&text, format, errors)
}
