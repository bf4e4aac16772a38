//! `collectives`: one row per collective call of a rank, in the order the communication
//! analysis lists them ([`collective_instances`]), with the step the rank comparison
//! assigns each.
//!
//! [`collective_instances`]: kinetoscope_analysis::comm::collective_instances

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use kinetoscope_analysis::comm::CollectiveInstance;
use kinetoscope_analysis::ranks::RankSummary;

use super::{bools, i64s, opt_i64s, opt_strs, sat, strs};
use crate::schema::Table;

/// The `collectives` rows of one rank: `instances` and the `summary` made from them.
pub(crate) fn batch(
    instances: &[CollectiveInstance],
    summary: &RankSummary,
) -> Result<RecordBatch, ArrowError> {
    let steps = steps_in_instance_order(instances, summary);
    let c = instances;
    super::batch(
        Table::Collectives,
        summary.rank,
        c.len(),
        vec![
            strs(c.iter().map(|x| x.process_group.as_str())),
            strs(c.iter().map(|x| x.process_group_desc.as_str())),
            strs(c.iter().map(|x| x.collective.as_str())),
            strs(names_in_instance_order(c, summary)),
            opt_strs(c.iter().map(|x| x.algorithm.as_deref())),
            strs(c.iter().map(|x| x.dtype.as_str())),
            opt_i64s(c.iter().map(|x| x.group_size)),
            opt_i64s(c.iter().map(|x| x.bytes.map(sat))),
            opt_i64s(c.iter().map(|x| x.seq)),
            // The bits of the unsigned id (Spark and others lack unsigned 64-bit).
            opt_i64s(c.iter().map(|x| x.comms_id.map(|v| v as i64))),
            opt_i64s(steps),
            i64s(c.iter().map(|x| x.call_ns.unwrap_or(x.start_ns))),
            bools(c.iter().map(|x| x.call_ns.is_some())),
            i64s(c.iter().map(|x| x.start_ns)),
            i64s(c.iter().map(|x| x.end_ns)),
            i64s(c.iter().map(|x| x.stream)),
            bools(c.iter().map(|x| x.on_gpu)),
        ],
    )
}

/// The order in which [`RankSummary`] lists the instances: by call, then start (a
/// stable sort, as the summary's).
fn summary_order(instances: &[CollectiveInstance]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..instances.len()).collect();
    order.sort_by_key(|&i| {
        let c = &instances[i];
        (c.call_ns.unwrap_or(c.start_ns), c.start_ns)
    });
    order
}

/// The summary's step of each instance, in instance order.
fn steps_in_instance_order(
    instances: &[CollectiveInstance],
    summary: &RankSummary,
) -> Vec<Option<i64>> {
    let mut steps = vec![None; instances.len()];
    for (k, i) in summary_order(instances).into_iter().enumerate() {
        steps[i] = summary.collectives.get(k).and_then(|c| c.step);
    }
    steps
}

/// The summary's folded collective name of each instance, in instance order.
fn names_in_instance_order<'a>(
    instances: &[CollectiveInstance],
    summary: &'a RankSummary,
) -> Vec<&'a str> {
    let mut names = vec![""; instances.len()];
    for (k, i) in summary_order(instances).into_iter().enumerate() {
        if let Some(c) = summary.collectives.get(k) {
            names[i] = summary.names[c.name as usize].as_str();
        }
    }
    names
}
