//! GPU efficiency rules.
pub mod attention_without_flash;
pub mod conv_layout;
pub mod fp32_gemm;
pub mod gemm_alignment;
pub mod host_bound_gaps;
pub mod launch_bound;
pub mod low_gpu_utilization;
pub mod low_occupancy;
pub mod roofline_gap;

use crate::facts::Facts;
use crate::summary::graph_replay;

/// An evidence line on graph replay in the steps, when any.
pub(crate) fn graph_replay_line(facts: &Facts) -> Option<String> {
    let g = graph_replay(facts)?;
    let n = facts.n_steps().max(1) as f64;
    Some(format!(
        "CUDA/HIP graphs are in use: {:.1} graph launches per step replay {:.0} kernels \
         ({:.1} % of kernel time)",
        g.launches as f64 / n,
        g.kernels as f64 / n,
        100.0 * g.kernel_share
    ))
}
