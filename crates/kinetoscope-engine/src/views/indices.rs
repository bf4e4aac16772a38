//! The links most views share, built ahead of the first view: what a handle that keeps
//! its traces (the Python package's `open()`) builds once, so that no first query pays
//! for it.

use crate::input::Source;
use crate::Engine;

impl Engine {
    /// Build, for every trace of `src`, the CUPTI correlation index and the operators'
    /// nesting (the two on two threads when the engine reads with more than one). Worth
    /// it only when the engine keeps its traces (a trace cache); otherwise each trace is
    /// read again and dropped. Traces that cannot be read are left to the views to report.
    pub fn build_indices(&self, src: &Source) {
        let two = self.read.threads > 1;
        let _ = self.map_any(src, |t| {
            std::thread::scope(|s| {
                if two {
                    s.spawn(|| {
                        t.correlation_index();
                    });
                } else {
                    t.correlation_index();
                }
                t.nesting();
            });
        });
    }
}
