//! Engine documents' rows and the model's event table as Arrow record batches, for any
//! front end that hands data on in columns (the Python package's `pyarrow` tables
//! through the Arrow C stream interface; Parquet export next).
//!
//! - [`tables`]: which row list of which view's document makes a table
//!   ([`tables::TableSpec`], [`tables::TABLES`]) and the rows it yields, each with its
//!   trace's `path` and `rank`.
//! - [`rows`]: JSON rows (objects) to one [`RecordBatch`], nested objects flattened into
//!   dotted column names, types inferred from the values.
//! - [`empty`]: the columns of a table without rows (recorded from the fixtures).
//! - [`events`]: a [`kinetoscope_trace::Trace`]'s event table as a batch (names and
//!   categories as dictionary columns, times in int64 nanoseconds).
//! - [`value`]: a document as JSON values whose objects keep their keys' order.
//! - [`stream`]: batches as an `ArrowArrayStream` (the C stream interface).

pub mod empty;
pub mod events;
pub mod rows;
pub mod stream;
pub mod tables;
pub mod value;

pub use arrow_array::RecordBatch;
pub use arrow_schema::{ArrowError, SchemaRef};
