//! Tests of the Parquet contract without the engine: the documented schema, one rank's
//! tables from a real trace written and read back, and hostile files. (The engine's
//! tests cover whole exports and `ranks` from them.)

mod docs;
mod rank;
