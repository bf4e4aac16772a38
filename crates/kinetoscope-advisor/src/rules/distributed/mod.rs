//! Rules across the rank traces of one job.
pub mod data_parallel;
pub mod straggler_rank;
