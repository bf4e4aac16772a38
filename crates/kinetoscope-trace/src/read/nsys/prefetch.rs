//! The rows of one query read ahead, on a connection and a thread of their own, and
//! handed to the loader in chunks through a bounded channel: SQLite decodes the next
//! rows of a table (and of the tables after it) while the loader builds the model from
//! the rows before, and no table is ever held whole.

use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver};

use rusqlite::Row;

/// Rows per chunk.
const CHUNK_ROWS: usize = 4096;
/// Chunks a table reads ahead of the loader.
const CHUNKS_AHEAD: usize = 4;

/// The rows of one query, decoded on their own thread.
pub(super) struct Prefetch<T> {
    rx: Receiver<rusqlite::Result<Vec<T>>>,
}

impl<T: Send + 'static> Prefetch<T> {
    /// Start reading `sql` over the export at `path` (opened read-only and immutable),
    /// each row decoded by `decode`. Dropping the `Prefetch` stops the thread at its next
    /// chunk.
    pub(super) fn start(
        path: PathBuf,
        sql: String,
        decode: fn(&Row<'_>) -> T,
    ) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel(CHUNKS_AHEAD);
        std::thread::Builder::new()
            .name("nsys-table".into())
            .spawn(move || {
                let read = || -> rusqlite::Result<()> {
                    let conn = super::connect(&path)?;
                    let mut stmt = conn.prepare(&sql)?;
                    let mut rows = stmt.query([])?;
                    let mut chunk = Vec::with_capacity(CHUNK_ROWS);
                    while let Some(r) = rows.next()? {
                        chunk.push(decode(r));
                        if chunk.len() == CHUNK_ROWS {
                            let full =
                                std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_ROWS));
                            if tx.send(Ok(full)).is_err() {
                                return Ok(());
                            }
                        }
                    }
                    if !chunk.is_empty() {
                        let _ = tx.send(Ok(chunk));
                    }
                    Ok(())
                };
                if let Err(e) = read() {
                    let _ = tx.send(Err(e));
                }
            })?;
        Ok(Self { rx })
    }

    /// The next chunk of rows, or the query's failure; `None` after the last.
    pub(super) fn next_chunk(&self) -> Option<rusqlite::Result<Vec<T>>> {
        self.rx.recv().ok()
    }
}
