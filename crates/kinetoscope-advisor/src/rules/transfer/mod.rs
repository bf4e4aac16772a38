//! Host–device copy rules.
pub mod excessive_transfers;
pub mod pageable_memcpy;
