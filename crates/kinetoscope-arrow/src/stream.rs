//! Record batches as an Arrow C stream (`ArrowArrayStream`), the structure the Arrow
//! PyCapsule interface (`__arrow_c_stream__`) and other C consumers take over.

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::SchemaRef;

/// A C stream over `batches`, all of `schema`; the consumer that takes it over releases
/// it (dropping it unreleased releases it here).
pub fn ffi_stream(schema: SchemaRef, batches: Vec<RecordBatch>) -> FFI_ArrowArrayStream {
    let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    FFI_ArrowArrayStream::new(Box::new(reader))
}
