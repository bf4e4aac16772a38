//! The renderers' integration tests: documents made by the engine from real traces,
//! rendered, and read back.

mod common;
mod xlsx;
