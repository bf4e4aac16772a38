//! Integration tests of the engine: opening inputs (files, rank folders, run folders,
//! bytes in memory), the documents each view returns (and that they read back from
//! their JSON), and the cross-trace decisions.

mod common;
mod inputs;
mod round_trip;
mod views;
