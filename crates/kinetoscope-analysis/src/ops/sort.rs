//! Sort keys of the operator table. Numbers sort descending, names ascending; ties fall
//! back to host self time, then the name, then the grouping text, so the order is
//! deterministic (the plugin leaves tied rows in an unspecified order).

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use super::OpRow;
use crate::sort_key::sort_rows_by;

/// A column the operator table can be sorted by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpSortKey {
    /// Device self time (the plugin's default when the trace has GPU work).
    #[default]
    DeviceSelf,
    /// Device total time.
    DeviceTotal,
    /// Host self time (the plugin's default for CPU-only traces).
    HostSelf,
    /// Host total time.
    HostTotal,
    /// Number of calls.
    Calls,
    /// Tensor-core kernel time within the device total.
    TcTotal,
    /// Operator name (ascending).
    Name,
}

impl OpSortKey {
    /// Every key with its command-line spelling.
    pub const ALL: [(&'static str, OpSortKey); 7] = [
        ("device_self", OpSortKey::DeviceSelf),
        ("device_total", OpSortKey::DeviceTotal),
        ("host_self", OpSortKey::HostSelf),
        ("host_total", OpSortKey::HostTotal),
        ("calls", OpSortKey::Calls),
        ("tc_total", OpSortKey::TcTotal),
        ("name", OpSortKey::Name),
    ];

    /// Parse a command-line spelling (`device_self`, `device-self`, ...).
    pub fn parse(text: &str) -> Option<Self> {
        crate::sort_key::parse(&Self::ALL, text)
    }

    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        crate::sort_key::spelling(&Self::ALL, self, "device_self")
    }
}

fn value(row: &OpRow, key: OpSortKey) -> i64 {
    match key {
        OpSortKey::DeviceSelf => row.device_self_ns,
        OpSortKey::DeviceTotal => row.device_total_ns,
        OpSortKey::HostSelf => row.host_self_ns,
        OpSortKey::HostTotal => row.host_total_ns,
        OpSortKey::Calls => row.calls as i64,
        OpSortKey::TcTotal => row.tc_total_ns,
        OpSortKey::Name => 0,
    }
}

fn compare(a: &OpRow, b: &OpRow, key: OpSortKey) -> Ordering {
    value(b, key)
        .cmp(&value(a, key))
        .then_with(|| b.host_self_ns.cmp(&a.host_self_ns))
        .then_with(|| a.name.cmp(&b.name))
        .then_with(|| a.input_shape.cmp(&b.input_shape))
        .then_with(|| a.call_stack.cmp(&b.call_stack))
        .then_with(|| a.module.cmp(&b.module))
}

/// Sort rows in place.
pub(crate) fn sort_rows(rows: &mut [OpRow], key: OpSortKey) {
    if key == OpSortKey::Name {
        sort_rows_by(rows, |a, b| {
            a.name
                .cmp(&b.name)
                .then_with(|| compare(a, b, OpSortKey::DeviceSelf))
        });
    } else {
        sort_rows_by(rows, |a, b| compare(a, b, key));
    }
}
