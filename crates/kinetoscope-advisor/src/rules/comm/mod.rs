//! Communication rules, over `kinetoscope_analysis::comm`.
pub mod exposed_communication;
