//! The server's integration tests, one binary: a server on a free port over temporary
//! folders of real traces, spoken to over raw TCP.
//!
//! - [`security`]: every security rule (token, paths, links, methods, sizes, malformed
//!   and slow clients, special files, the default address).
//! - [`api`]: runs, workers and spans of a log dir (files added later appear), every
//!   view's document equal to the engine's (the CLI's `--format json`), the diff.
//! - [`timeline`]: window queries on a real trace: every span accounted for, payload
//!   bounded, buckets merged; event details, search.

mod api;
mod common;
mod security;
mod timeline;
