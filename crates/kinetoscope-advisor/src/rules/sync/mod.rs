//! Host–device synchronisation rules.
pub mod host_device_sync;
