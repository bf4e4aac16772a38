//! What most views share, built ahead of the first view: what a handle that keeps its
//! traces (the Python package's `open()`) builds once, so that no first query pays for
//! it.

use kinetoscope_analysis::overview::prepare_steps;
use kinetoscope_trace::Trace;

use crate::input::Source;
use crate::Engine;

impl Engine {
    /// Build, for every trace of `src`, the CUPTI correlation index and then the step
    /// windows ([`prepare_steps`], which use it), and the operators' nesting: the two
    /// sides on two threads when the engine reads with more than one. Worth it only when
    /// the engine keeps its traces (a trace cache); otherwise each trace is read again
    /// and dropped. Traces that cannot be read are left to the views to report.
    pub fn build_indices(&self, src: &Source) {
        let two = self.read.threads > 1;
        let launches = |t: &Trace| {
            t.correlation_index();
            prepare_steps(t);
        };
        let _ = self.map_any(src, |t| {
            std::thread::scope(|s| {
                if two {
                    s.spawn(|| launches(t));
                } else {
                    launches(t);
                }
                t.nesting();
            });
        });
    }
}
