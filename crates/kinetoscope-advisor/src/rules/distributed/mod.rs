//! Rules across the rank traces of one job.
pub mod data_parallel;
pub mod non_nccl_backend;
pub mod rank_memory_imbalance;
pub mod straggler_rank;
