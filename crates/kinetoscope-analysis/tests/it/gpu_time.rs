//! The launch index of the GPU-time analyses: runtime and driver calls by correlation id.

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
        let trace = trace_of_events(&events);
        let index = LaunchIndex::build(&trace);
        let first = |id: i64| ids.iter().position(|&x| x == id).map(|p| p as u32);
        for id in [3, 5, 9, 12] {
            assert_eq!(index.get(id * scale), first(id), "scale {scale}, id {id}");
        }
        for id in [4, 6, 13, -3] {
            assert_eq!(index.get(id * scale), None, "scale {scale}, id {id}");
        }
        assert_eq!(index.get(0), None);
    }
}
