//! The activity tables' rows as plain values, the queries that select them, and the
//! typed reads of one column.

use rusqlite::types::ValueRef;
use rusqlite::Row;
use rustc_hash::FxHashSet;

/// The longest text kept from any column (an NVTX text, a kernel name); longer ones are
/// cut at a character boundary.
pub(super) const MAX_TEXT_BYTES: usize = 64 << 10;

/// NVTX event types (`ENUM_NSYS_EVENT_TYPE`).
pub(super) const NVTX_MARK: i64 = 34;
pub(super) const NVTX_PUSH_POP: i64 = 59;
pub(super) const NVTX_START_END: i64 = 60;
pub(super) const NVTX_DOMAIN_CREATE: i64 = 75;

/// A runtime or driver API call.
pub(super) struct CallRow {
    pub start: i64,
    pub end: i64,
    pub global_tid: i64,
    pub correlation: i64,
    pub name_id: i64,
}

/// What every GPU activity row has: when, where, and which launch.
pub(super) struct GpuRow {
    pub start: i64,
    pub end: i64,
    pub device: i64,
    pub stream: i64,
    pub correlation: i64,
    pub global_pid: i64,
}

/// A kernel and its launch geometry.
pub(super) struct KernelRow {
    pub gpu: GpuRow,
    /// `shortName`, else `demangledName`, as a `StringIds` id (-1 when neither).
    pub name_id: i64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub registers: u32,
    pub shared_memory: u64,
}

/// A CUDA graph execution.
pub(super) struct GraphRow {
    pub gpu: GpuRow,
    pub graph_id: i64,
}

/// A memcpy: bytes, and its kind as `(copyKind, srcKind, dstKind)` (-1 when absent).
pub(super) struct MemcpyRow {
    pub gpu: GpuRow,
    pub bytes: i64,
    pub kind: (i64, i64, i64),
}

/// A memset: bytes and `memKind` (-1 when absent).
pub(super) struct MemsetRow {
    pub gpu: GpuRow,
    pub bytes: i64,
    pub mem_kind: i64,
}

/// A synchronisation and its `syncType`.
pub(super) struct SyncRow {
    pub gpu: GpuRow,
    pub sync_type: i64,
}

/// An NVTX mark or range (the text of a mark is not read).
pub(super) struct NvtxRow {
    pub start: i64,
    pub end: Option<i64>,
    pub event_type: i64,
    pub text: Option<String>,
    pub text_id: Option<i64>,
    pub global_tid: i64,
    pub domain: i64,
}

/// The columns of a table, for queries that select only what the export has.
pub(super) struct Columns(pub FxHashSet<String>);

impl Columns {
    /// `col` when the table has it, else `NULL`, for a select list.
    pub fn or_null(&self, col: &str) -> String {
        if self.0.contains(col) {
            format!("\"{col}\"")
        } else {
            "NULL".to_owned()
        }
    }

    /// The NVTX `text` column cut to [`MAX_TEXT_BYTES`] characters by SQLite itself (so
    /// a huge value is never copied whole), or `NULL` when the table lacks it.
    pub fn text(&self) -> String {
        if self.0.contains("text") {
            format!("substr(\"text\", 1, {})", MAX_TEXT_BYTES + 4)
        } else {
            "NULL".to_owned()
        }
    }
}

/// The query of a runtime or driver table.
pub(super) fn call_sql(table: &str) -> String {
    format!("SELECT start, end, globalTid, correlationId, nameId FROM {table}")
}

/// A row of its query as a [`CallRow`].
pub(super) fn call_row(r: &Row<'_>) -> CallRow {
    CallRow {
        start: int(r, 0),
        end: int(r, 1),
        global_tid: int(r, 2),
        correlation: int(r, 3),
        name_id: int(r, 4),
    }
}

/// The six columns [`gpu_row`] reads, first in every GPU query.
const GPU_COLUMNS: &str = "start, end, deviceId, streamId, correlationId, globalPid";

/// The first six columns of a GPU query as a [`GpuRow`].
fn gpu_row(r: &Row<'_>) -> GpuRow {
    GpuRow {
        start: int(r, 0),
        end: int(r, 1),
        device: int(r, 2),
        stream: int(r, 3),
        correlation: int(r, 4),
        global_pid: int(r, 5),
    }
}

/// The query of the kernel table.
pub(super) fn kernel_sql(table: &str, c: &Columns) -> String {
    format!(
        "SELECT {GPU_COLUMNS}, {}, {}, gridX, gridY, gridZ, blockX, blockY, blockZ, \
         registersPerThread, {}, {} FROM {table}",
        c.or_null("shortName"),
        c.or_null("demangledName"),
        c.or_null("staticSharedMemory"),
        c.or_null("dynamicSharedMemory"),
    )
}

/// A row of its query as a [`KernelRow`].
pub(super) fn kernel_row(r: &Row<'_>) -> KernelRow {
    let dim = |i: usize| int(r, i).clamp(0, u32::MAX as i64) as u32;
    KernelRow {
        gpu: gpu_row(r),
        name_id: opt_int(r, 6).or_else(|| opt_int(r, 7)).unwrap_or(-1),
        grid: [dim(8), dim(9), dim(10)],
        block: [dim(11), dim(12), dim(13)],
        registers: dim(14),
        shared_memory: (int(r, 15).max(0) as u64).saturating_add(int(r, 16).max(0) as u64),
    }
}

/// The query of the graph-trace table.
pub(super) fn graph_sql(table: &str) -> String {
    format!("SELECT {GPU_COLUMNS}, graphId FROM {table}")
}

/// A row of its query as a [`GraphRow`].
pub(super) fn graph_row(r: &Row<'_>) -> GraphRow {
    GraphRow {
        gpu: gpu_row(r),
        graph_id: int(r, 6),
    }
}

/// The query of the memcpy table.
pub(super) fn memcpy_sql(table: &str, c: &Columns) -> String {
    format!(
        "SELECT {GPU_COLUMNS}, bytes, copyKind, {}, {} FROM {table}",
        c.or_null("srcKind"),
        c.or_null("dstKind"),
    )
}

/// A row of its query as a [`MemcpyRow`].
pub(super) fn memcpy_row(r: &Row<'_>) -> MemcpyRow {
    MemcpyRow {
        gpu: gpu_row(r),
        bytes: int(r, 6),
        kind: (
            int(r, 7),
            opt_int(r, 8).unwrap_or(-1),
            opt_int(r, 9).unwrap_or(-1),
        ),
    }
}

/// The query of the memset table.
pub(super) fn memset_sql(table: &str, c: &Columns) -> String {
    format!(
        "SELECT {GPU_COLUMNS}, bytes, {} FROM {table}",
        c.or_null("memKind")
    )
}

/// A row of its query as a [`MemsetRow`].
pub(super) fn memset_row(r: &Row<'_>) -> MemsetRow {
    MemsetRow {
        gpu: gpu_row(r),
        bytes: int(r, 6),
        mem_kind: opt_int(r, 7).unwrap_or(-1),
    }
}

/// The query of the synchronisation table.
pub(super) fn sync_sql(table: &str) -> String {
    format!("SELECT {GPU_COLUMNS}, syncType FROM {table}")
}

/// A row of its query as a [`SyncRow`].
pub(super) fn sync_row(r: &Row<'_>) -> SyncRow {
    SyncRow {
        gpu: gpu_row(r),
        sync_type: int(r, 6),
    }
}

/// The query of the NVTX marks and ranges, in start order.
pub(super) fn nvtx_sql(table: &str, c: &Columns) -> String {
    format!(
        "SELECT start, end, eventType, {}, {}, globalTid, {} FROM {table} \
         WHERE eventType IN ({NVTX_MARK}, {NVTX_PUSH_POP}, {NVTX_START_END}) \
         ORDER BY start",
        c.text(),
        c.or_null("textId"),
        c.or_null("domainId"),
    )
}

/// A row of its query as a [`NvtxRow`].
pub(super) fn nvtx_row(r: &Row<'_>) -> NvtxRow {
    let event_type = int(r, 2);
    let mark = event_type == NVTX_MARK;
    NvtxRow {
        start: int(r, 0),
        end: opt_int(r, 1),
        event_type,
        text: if mark { None } else { text(r, 3) },
        text_id: opt_int(r, 4),
        global_tid: int(r, 5),
        domain: int(r, 6),
    }
}

/// An integer column; 0 for NULL or a non-integer.
pub(super) fn int(row: &Row<'_>, i: usize) -> i64 {
    match row.get_ref(i) {
        Ok(ValueRef::Integer(v)) => v,
        Ok(ValueRef::Real(v)) if v.is_finite() => v as i64,
        _ => 0,
    }
}

/// An integer column; `None` for NULL or a non-integer.
pub(super) fn opt_int(row: &Row<'_>, i: usize) -> Option<i64> {
    match row.get_ref(i) {
        Ok(ValueRef::Integer(v)) => Some(v),
        _ => None,
    }
}

/// A text column as UTF-8 (invalid bytes replaced), capped at [`MAX_TEXT_BYTES`];
/// `None` for NULL.
pub(super) fn text(row: &Row<'_>, i: usize) -> Option<String> {
    match row.get_ref(i) {
        Ok(ValueRef::Text(b) | ValueRef::Blob(b)) => Some(capped(b)),
        Ok(ValueRef::Integer(v)) => Some(v.to_string()),
        _ => None,
    }
}

fn capped(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(&b[..b.len().min(MAX_TEXT_BYTES + 4)]);
    if s.len() <= MAX_TEXT_BYTES {
        return s.into_owned();
    }
    let mut end = MAX_TEXT_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}
