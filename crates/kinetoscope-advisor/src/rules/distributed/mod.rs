//! Rules across the rank traces of one job.
pub mod straggler_rank;
