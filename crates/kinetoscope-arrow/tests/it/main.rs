//! Integration tests of kinetoscope-arrow on the trace crate's fixtures.

mod empty;
mod tables;
