//! Integration tests of the engine: opening inputs (files, rank folders, run folders,
//! bytes in memory), the documents each view returns, and the cross-trace decisions.

mod common;
mod inputs;
mod views;
