//! Sparse argument tables: the `args` analyses need, kept only for the events that carry
//! them, each table in event order so [`ArgTables`] lookups are binary searches.
//!
//! Texts that analyses group by (shapes, types, stacks) are kept as interned raw JSON
//! text; [`parse_dims`] turns an `Input Dims` text into shapes.

pub use super::kernel_table::{KernelArgs, KernelLaunch, KernelTable};
use super::{EventId, NarrowColumn, StrId};

/// Arguments of a CPU operator or annotation.
#[derive(Clone, Debug, PartialEq)]
pub struct OpArgs {
    /// The event.
    pub event: EventId,
    /// `Input Dims` (`Input dims` in 1.8) as raw JSON text, e.g. `[[4, 16], [16]]`.
    pub input_dims: StrId,
    /// `Input type` as raw JSON text, e.g. `["float", "float"]`.
    pub input_types: StrId,
    /// `Input Strides` as raw JSON text (2.4+).
    pub input_strides: StrId,
    /// `Concrete Inputs` as raw JSON text (2.1+).
    pub concrete_inputs: StrId,
    /// `Call stack` (`;`-joined frames), when recorded.
    pub call_stack: StrId,
    /// `Module Hierarchy` (TorchScript), when recorded.
    pub module_hierarchy: StrId,
}

/// Arguments of a GPU memcpy or memset.
#[derive(Clone, Debug, PartialEq)]
pub struct TransferArgs {
    /// The event.
    pub event: EventId,
    /// CUDA device (`device`, or `toDevice` for peer copies), or -1.
    pub device: i64,
    /// CUDA stream, or -1.
    pub stream: i64,
    /// `bytes` moved or set.
    pub bytes: u64,
}

/// Arguments of a CUPTI synchronisation event (`cuda_sync`).
#[derive(Clone, Debug, PartialEq)]
pub struct SyncArgs {
    /// The event.
    pub event: EventId,
    /// `stream` as written, or -1 when absent. Device-wide syncs (`Context Sync`,
    /// `Event Sync`) carry -1, or 4294967295 (-1 as an unsigned 32-bit number) in Kineto
    /// before 2024; HTA counts only the latter as GPU activity.
    pub stream: i64,
}

/// Arguments of a `[memory]` or `[OutOfMemory]` instant (`profile_memory=True`).
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryArgs {
    /// The event.
    pub event: EventId,
    /// `Addr` (0 when absent).
    pub addr: u64,
    /// `Bytes`: positive for an allocation, negative for a free.
    pub bytes: i64,
    /// `Total Allocated` after the event, or -1 when absent.
    pub total_allocated: i64,
    /// `Total Reserved` after the event, or -1 when absent.
    pub total_reserved: i64,
    /// `Device Type` (`c10::DeviceType`: 0 CPU, 1 CUDA, ...).
    pub device_type: i64,
    /// `Device Id` (-1 for CPU).
    pub device_id: i64,
}

/// Collective-communication arguments, from `record_param_comms` ops and from NCCL
/// kernels that Kineto copied them onto.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveArgs {
    /// The event.
    pub event: EventId,
    /// `Collective name` (`allreduce`, `allgather`, ...).
    pub collective_name: StrId,
    /// `dtype`.
    pub dtype: StrId,
    /// `In msg nelems`, or -1.
    pub in_msg_nelems: i64,
    /// `Out msg nelems`, or -1.
    pub out_msg_nelems: i64,
    /// `Group size`, or -1.
    pub group_size: i64,
    /// `Process Group Name` (or the older integer `Process Group ID`, as text).
    pub pg_name: StrId,
    /// `Process Group Description`.
    pub pg_desc: StrId,
    /// `Process Group Ranks` text, e.g. `[0, 1]`.
    pub pg_ranks: StrId,
    /// `Seq` (2026+), or -1.
    pub seq: i64,
    /// `Comms Id`: the same value on every rank for one collective call (a hash of the
    /// process group and its sequence number), when recorded.
    pub comms_id: Option<u64>,
}

/// Arguments of a `python_function` event.
#[derive(Clone, Debug, PartialEq)]
pub struct PythonArgs {
    /// The event.
    pub event: EventId,
    /// `Python id`, or -1.
    pub python_id: i64,
    /// `Python parent id`, or -1 for roots.
    pub parent_id: i64,
    /// `Python module id` (set on `nn.Module:` frames), or -1.
    pub module_id: i64,
}

/// All sparse argument tables of a trace, each sorted by event.
#[derive(Clone, Debug, Default)]
pub struct ArgTables {
    /// Operator and annotation arguments.
    pub op: Vec<OpArgs>,
    /// Autograd `Sequence number` of each row of `op`, or -1 (a column of its own, in
    /// 32 bits where it fits: see [`NarrowColumn`]).
    pub op_sequence_number: NarrowColumn,
    /// `Fwd thread id` of each row of `op`, or -1.
    pub op_fwd_thread_id: NarrowColumn,
    /// Kernel arguments, launch configurations stored once ([`KernelTable`]).
    pub kernel: KernelTable,
    /// Memcpy and memset arguments.
    pub transfer: Vec<TransferArgs>,
    /// Synchronisation event arguments.
    pub sync: Vec<SyncArgs>,
    /// Memory instants.
    pub memory: Vec<MemoryArgs>,
    /// Collective metadata.
    pub collective: Vec<CollectiveArgs>,
    /// Python-function links.
    pub python: Vec<PythonArgs>,
}

macro_rules! lookup {
    ($fn_name:ident, $field:ident, $ty:ty) => {
        /// The arguments recorded for `event` in this table, if any.
        pub fn $fn_name(&self, event: EventId) -> Option<&$ty> {
            self.$field
                .binary_search_by_key(&event, |a| a.event)
                .ok()
                .map(|i| &self.$field[i])
        }
    };
}

impl ArgTables {
    /// The kernel arguments recorded for `event`, if any.
    pub fn kernel_of(&self, event: EventId) -> Option<KernelArgs> {
        self.kernel.of(event)
    }
    lookup!(op_of, op, OpArgs);

    /// The row of `event` in `op` (and in the columns beside it), if it has one.
    pub fn op_row(&self, event: EventId) -> Option<usize> {
        self.op.binary_search_by_key(&event, |a| a.event).ok()
    }
    lookup!(transfer_of, transfer, TransferArgs);
    lookup!(sync_of, sync, SyncArgs);
    lookup!(memory_of, memory, MemoryArgs);
    lookup!(collective_of, collective, CollectiveArgs);
    lookup!(python_of, python, PythonArgs);
}

/// The rows of `op` of events asked for in increasing order: each found by galloping
/// forward from the last, so a pass over n events in file order costs O(n log gap), not
/// a search of the whole table each.
pub struct OpArgsCursor<'a> {
    op: &'a [OpArgs],
    /// Rows before it hold events below the last one asked for.
    at: usize,
}

impl<'a> OpArgsCursor<'a> {
    /// A cursor at the first row of `tables.op`.
    pub fn new(tables: &'a ArgTables) -> Self {
        Self {
            op: &tables.op,
            at: 0,
        }
    }

    /// The arguments of `event` (not below any event asked for before), if any.
    pub fn of(&mut self, event: EventId) -> Option<&'a OpArgs> {
        let rest = &self.op[self.at..];
        // The first row not below `event` lies in (step / 2, step].
        let mut step = 1;
        while step <= rest.len() && rest[step - 1].event < event {
            step *= 2;
        }
        let lo = step / 2;
        let hi = step.min(rest.len());
        let k = lo + rest[lo..hi].partition_point(|a| a.event < event);
        self.at += k;
        self.op.get(self.at).filter(|a| a.event == event)
    }
}

/// Parse an `Input Dims` text (`[[4, 16], [], [16]]`) into one shape per input; a
/// TensorList input flattens to its first shape. Returns `None` for text that is not a
/// list of lists of integers.
pub fn parse_dims(text: &str) -> Option<Vec<Vec<i64>>> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let outer = v.as_array()?;
    let mut shapes = Vec::with_capacity(outer.len());
    for input in outer {
        let dims = input.as_array()?;
        let mut shape = Vec::with_capacity(dims.len());
        for d in dims {
            match d {
                serde_json::Value::Number(n) => shape.push(n.as_i64()?),
                serde_json::Value::Array(inner) => {
                    for x in inner {
                        shape.push(x.as_i64()?);
                    }
                    break;
                }
                _ => return None,
            }
        }
        shapes.push(shape);
    }
    Some(shapes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(event: u32) -> OpArgs {
        OpArgs {
            event: EventId(event),
            input_dims: StrId(event),
            input_types: StrId(0),
            input_strides: StrId(0),
            concrete_inputs: StrId(0),
            call_stack: StrId(0),
            module_hierarchy: StrId(0),
        }
    }

    #[test]
    fn the_op_cursor_agrees_with_a_search_for_increasing_events() {
        // Rows for the multiples of 3 and a dense run; queries dense, sparse and repeated.
        let events: Vec<u32> = (0..300)
            .map(|k| k * 3)
            .chain(900..1000)
            .chain([5000])
            .collect();
        let tables = ArgTables {
            op: events.iter().map(|&e| row(e)).collect(),
            ..Default::default()
        };
        for stride in [1u32, 2, 7, 64, 1000] {
            let mut cursor = OpArgsCursor::new(&tables);
            let asked = (0..6000).step_by(stride as usize).flat_map(|e| [e, e]);
            for e in asked {
                let e = EventId(e);
                assert_eq!(
                    cursor.of(e),
                    tables.op_of(e),
                    "event {e:?}, stride {stride}"
                );
            }
        }
        let empty = ArgTables::default();
        assert_eq!(OpArgsCursor::new(&empty).of(EventId(3)), None);
    }
}
