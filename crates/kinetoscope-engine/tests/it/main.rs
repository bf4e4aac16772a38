//! Integration tests of the engine: opening inputs (files, rank folders, run folders,
//! bytes in memory), the documents each view returns (and that they read back from
//! their JSON), the cross-trace decisions, and invariants every view keeps on nasty
//! generated traces (`properties`), the loaded-trace session (`session`), and
//! throughput from input shapes (`throughput`).

mod bundle;
mod common;
mod diff;
mod grouped;
mod inputs;
mod parquet;
mod properties;
mod round_trip;
mod session;
mod streamed;
mod throughput;
mod views;
