//! The launch index of the GPU-time analyses: runtime and driver calls by correlation id,
//! built on its own or read off the trace's correlation index.

use kinetoscope_analysis::gpu_time::LaunchIndex;

use crate::common::trace_of_events;

/// A runtime call with correlation `corr` at `ts`.
fn call(ts: i64, corr: i64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 2, "args": {{"correlation": {corr}}}}}"#
    )
}

/// Each id answers its first call in file order, whether the ids are dense (a bit per
/// id) or sparse (a sorted list); ids no call carries, and 0, answer none.
#[test]
fn launch_index_answers_the_first_call_of_an_id() {
    for scale in [1i64, 7, 1 << 35] {
        let ids = [5, 3, 9, 3, 12, 5];
        let events: Vec<String> = ids
            .iter()
            .enumerate()
            .map(|(k, &id)| call(10 * k as i64, id * scale))
            .collect();
        // A kernel whose id no call carries: the correlation index holds its id.
        let mut events = events;
        events.push(kernel(100, 13 * scale));
        let trace = trace_of_events(&events);
        let built = LaunchIndex::build(&trace);
        let read_off = LaunchIndex::of_correlation(trace.correlation_index());
        let first = |id: i64| ids.iter().position(|&x| x == id).map(|p| p as u32);
        for index in [&built, &read_off] {
            for id in [3, 5, 9, 12] {
                assert_eq!(index.get(id * scale), first(id), "scale {scale}, id {id}");
            }
            for id in [4, 6, 13, -3] {
                assert_eq!(index.get(id * scale), None, "scale {scale}, id {id}");
            }
            assert_eq!(index.get(0), None);
        }
    }
}

/// A kernel with correlation `corr` at `ts`.
fn kernel(ts: i64, corr: i64) -> String {
    format!(
        r#"{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": {ts}, "dur": 2, "args": {{"correlation": {corr}, "stream": 7}}}}"#
    )
}

/// On real traces, the index read off the correlation index answers every id as the
/// one built on its own does.
#[test]
fn launch_index_read_off_the_correlation_index_is_the_same() {
    let mut ids_checked = 0;
    for name in [
        "worker0.1623143089861.pt.trace.json.gz",
        "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    ] {
        let trace = crate::common::read(&crate::common::trace_fixture(name));
        let built = LaunchIndex::build(&trace);
        let read_off = LaunchIndex::of_correlation(trace.correlation_index());
        let e = &trace.events;
        for i in 0..e.len() {
            let id = e.correlation.at(i);
            assert_eq!(built.get(id), read_off.get(id), "{name}: id {id}");
            ids_checked += usize::from(built.get(id).is_some());
        }
    }
    assert!(ids_checked > 1000, "{ids_checked} ids with a call");
}
