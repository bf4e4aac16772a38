//! `ranks` (one row per rank) and `steps` (one row per kept step of the overview), both
//! from the rank's [`RankSummary`].

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use kinetoscope_analysis::overview::Parts;
use kinetoscope_analysis::ranks::RankSummary;

use super::{batch, i32s, i64s, opt_i64s, strs};
use crate::schema::Table;

/// The `ranks` row of `s`.
pub(crate) fn ranks(s: &RankSummary) -> Result<RecordBatch, ArrowError> {
    let warnings =
        serde_json::to_string(&s.warnings).map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
    batch(
        Table::Ranks,
        s.rank,
        1,
        vec![
            strs([s.path.as_str()]),
            opt_i64s([s.world_size]),
            i64s([s.steps.len() as i64]),
            i64s([s.collectives.len() as i64]),
            i64s([s.comm_kernel_ns]),
            strs([warnings.as_str()]),
        ],
    )
}

/// The `steps` rows of `s`.
pub(crate) fn steps(s: &RankSummary) -> Result<RecordBatch, ArrowError> {
    let st = &s.steps;
    let part = |f: fn(&Parts<i64>) -> i64| i64s(st.iter().map(|x| f(&x.parts_ns)));
    batch(
        Table::Steps,
        s.rank,
        st.len(),
        vec![
            i32s((0..st.len()).map(|i| i as i32)),
            strs(st.iter().map(|x| x.name.as_str())),
            opt_i64s(st.iter().map(|x| x.number)),
            i64s(st.iter().map(|x| x.start_ns)),
            i64s(st.iter().map(|x| x.dur_ns)),
            part(|p| p.kernel),
            part(|p| p.memcpy),
            part(|p| p.memset),
            part(|p| p.communication),
            part(|p| p.runtime),
            part(|p| p.dataloader),
            part(|p| p.cpu_exec),
            part(|p| p.other),
        ],
    )
}
