//! Field numbers and enum values of Perfetto's trace schema
//! (`protos/perfetto/trace/perfetto_trace.proto`, vendored for the tests under
//! `tests/fixtures/perfetto/`), only those the writer uses.

/// `Trace.packet`.
pub const TRACE_PACKET: u32 = 1;

/// `TracePacket` fields.
pub mod packet {
    /// `timestamp` (ns).
    pub const TIMESTAMP: u32 = 8;
    /// `trusted_packet_sequence_id`.
    pub const SEQUENCE_ID: u32 = 10;
    /// `track_event`.
    pub const TRACK_EVENT: u32 = 11;
    /// `interned_data`.
    pub const INTERNED_DATA: u32 = 12;
    /// `sequence_flags`.
    pub const SEQUENCE_FLAGS: u32 = 13;
    /// `track_descriptor`.
    pub const TRACK_DESCRIPTOR: u32 = 60;
    /// `first_packet_on_sequence`.
    pub const FIRST_ON_SEQUENCE: u32 = 87;
    /// `SEQ_INCREMENTAL_STATE_CLEARED`.
    pub const SEQ_CLEARED: u64 = 1;
    /// `SEQ_NEEDS_INCREMENTAL_STATE`.
    pub const SEQ_NEEDS_STATE: u64 = 2;
}

/// `TrackDescriptor`, `ProcessDescriptor` and `ThreadDescriptor` fields.
pub mod track {
    /// `TrackDescriptor.uuid`.
    pub const UUID: u32 = 1;
    /// `TrackDescriptor.name`.
    pub const NAME: u32 = 2;
    /// `TrackDescriptor.process`.
    pub const PROCESS: u32 = 3;
    /// `TrackDescriptor.thread`.
    pub const THREAD: u32 = 4;
    /// `TrackDescriptor.parent_uuid`.
    pub const PARENT_UUID: u32 = 5;
    /// `TrackDescriptor.child_ordering`.
    pub const CHILD_ORDERING: u32 = 11;
    /// `TrackDescriptor.sibling_order_rank`.
    pub const SIBLING_ORDER_RANK: u32 = 12;
    /// `ChildTracksOrdering.EXPLICIT`.
    pub const ORDER_EXPLICIT: u64 = 3;
    /// `ProcessDescriptor.pid` and `ThreadDescriptor.pid`.
    pub const PID: u32 = 1;
    /// `ThreadDescriptor.tid`.
    pub const TID: u32 = 2;
    /// `ThreadDescriptor.thread_name`.
    pub const THREAD_NAME: u32 = 5;
    /// `ProcessDescriptor.process_name`.
    pub const PROCESS_NAME: u32 = 6;
    /// `ProcessDescriptor.process_labels`.
    pub const PROCESS_LABELS: u32 = 8;
}

/// `TrackEvent` fields and types.
pub mod event {
    /// `category_iids`.
    pub const CATEGORY_IIDS: u32 = 3;
    /// `debug_annotations`.
    pub const DEBUG_ANNOTATIONS: u32 = 4;
    /// `type`.
    pub const TYPE: u32 = 9;
    /// `name_iid`.
    pub const NAME_IID: u32 = 10;
    /// `track_uuid`.
    pub const TRACK_UUID: u32 = 11;
    /// `flow_ids` (fixed64).
    pub const FLOW_IDS: u32 = 47;
    /// `terminating_flow_ids` (fixed64).
    pub const TERMINATING_FLOW_IDS: u32 = 48;
    /// `TYPE_SLICE_BEGIN`.
    pub const SLICE_BEGIN: u64 = 1;
    /// `TYPE_SLICE_END`.
    pub const SLICE_END: u64 = 2;
    /// `TYPE_INSTANT`.
    pub const INSTANT: u64 = 3;
}

/// `InternedData` fields and its entries' (`EventName`, `EventCategory`,
/// `DebugAnnotationName`: `iid` 1, `name` 2).
pub mod interned {
    /// `event_categories`.
    pub const EVENT_CATEGORIES: u32 = 1;
    /// `event_names`.
    pub const EVENT_NAMES: u32 = 2;
    /// `debug_annotation_names`.
    pub const DEBUG_ANNOTATION_NAMES: u32 = 3;
    /// An entry's `iid`.
    pub const IID: u32 = 1;
    /// An entry's `name`.
    pub const NAME: u32 = 2;
}

/// `DebugAnnotation` fields.
pub mod annotation {
    /// `name_iid`.
    pub const NAME_IID: u32 = 1;
    /// `int_value`.
    pub const INT_VALUE: u32 = 4;
    /// `string_value`.
    pub const STRING_VALUE: u32 = 6;
}
