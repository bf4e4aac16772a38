//! GPU efficiency rules.
pub mod attention_without_flash;
pub mod conv_layout;
pub mod fp32_gemm;
pub mod gemm_alignment;
pub mod host_bound_gaps;
pub mod launch_bound;
pub mod low_gpu_utilization;
pub mod low_occupancy;
