//! Step-level rules.
pub mod step_time_variance;
pub mod warmup_in_profile;
