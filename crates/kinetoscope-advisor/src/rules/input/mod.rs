//! Input pipeline rules.
pub mod dataloader_stall;
