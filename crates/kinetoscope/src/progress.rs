//! A progress bar on stderr for reads of large files, shown only on a terminal.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use indicatif::{ProgressBar, ProgressStyle};
use kinetoscope_engine::{Progress, ProgressFn};

/// Files smaller than this read too fast to need a bar.
const MIN_BYTES: u64 = 64 << 20;

/// The engine's progress sink for a terminal: a bar over the total size of the files
/// read, when stderr is a terminal and the input is large.
#[derive(Default)]
pub struct TerminalProgress {
    bar: Mutex<Option<ProgressBar>>,
}

impl Progress for TerminalProgress {
    fn start(&self, files: &[PathBuf]) -> Option<ProgressFn> {
        let total: u64 = files
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum();
        if total < MIN_BYTES || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} reading {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
            )
            .ok()?,
        );
        *self.bar.lock().unwrap_or_else(|p| p.into_inner()) = Some(bar.clone());
        let last = Arc::new(AtomicU64::new(0));
        Some(Arc::new(move |done| {
            // Per-file counters restart at 0; add only the growth.
            let prev = last.swap(done, Ordering::Relaxed);
            if done > prev {
                bar.inc(done - prev);
            }
        }))
    }

    fn finish(&self) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
            bar.finish_and_clear();
        }
    }
}
