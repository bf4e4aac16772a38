//! A progress bar on stderr for reads of large files, shown only on a terminal.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use kinetoscope_trace::read::ProgressFn;

/// Files smaller than this read too fast to need a bar.
const MIN_BYTES: u64 = 64 << 20;

/// A bar over the total size of `paths`, or `None` when stderr is not a terminal or the
/// input is small.
pub fn bar_for(paths: &[&Path]) -> Option<ProgressBar> {
    let total: u64 = paths
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
        .expect("valid template"),
    );
    Some(bar)
}

/// A reader callback that advances `bar` by the bytes each file reports.
pub fn callback(bar: &ProgressBar) -> ProgressFn {
    let bar = bar.clone();
    let last = Arc::new(std::sync::atomic::AtomicU64::new(0));
    Arc::new(move |done| {
        // Per-file counters restart at 0; add only the growth.
        let prev = last.swap(done, std::sync::atomic::Ordering::Relaxed);
        if done > prev {
            bar.inc(done - prev);
        }
    })
}
