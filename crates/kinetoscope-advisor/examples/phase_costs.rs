//! Where `report`'s time goes after the read: each shared fact and each rule of one
//! trace timed alone (with the pages of fresh memory it touched), one after the other on one thread (the overview uses two), in the
//! order the advisor needs them. A fact is timed where it is first made; a rule's time
//! leaves out the facts made before it.
//!
//! ```text
//! cargo run --release -p kinetoscope-advisor --example phase_costs -- TRACE
//! ```

use std::time::Instant;

use kinetoscope_advisor::{facts::Facts, flops, rules, summary, Config};
use kinetoscope_trace::read::{read_trace, ReadOptions};
use kinetoscope_trace::EventId;

/// Minor page faults of this process so far (fresh memory first touched), from
/// `/proc/self/stat`; 0 where it cannot be read.
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (in parentheses, which may hold spaces):
    // minflt is the 10th field of the line, the 8th after the name.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(7)?.parse().ok())
        .unwrap_or(0)
}

/// Run `f`, print its wall time and the pages it faulted in with `name` on stderr,
/// return its result.
fn timed<R>(name: &str, f: impl FnOnce() -> R) -> R {
    let (start, faults) = (Instant::now(), minor_faults());
    let r = f();
    eprintln!(
        "{:>8.1} ms {:>8} faults  {name}",
        start.elapsed().as_secs_f64() * 1e3,
        minor_faults() - faults
    );
    r
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: phase_costs TRACE");
        std::process::exit(2);
    };
    let opts = ReadOptions {
        threads: 2,
        ..Default::default()
    };
    let trace = match timed("read (2 threads)", || read_trace(path.as_ref(), &opts)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let after_read = Instant::now();
    timed("correlation index", || trace.correlation_index().launch(0));
    timed("nesting", || trace.nesting().parent_of(EventId(0)));
    let memory = timed("memory view", || {
        kinetoscope_analysis::memory::analyze_trace_for_rules(&trace, &Default::default())
    });
    let facts = timed("overview (Facts::new)", || Facts::new(&trace)).with_memory(move || memory);
    timed("GPU rows", || facts.gpu_rows().rows.len());
    timed("launch index", || facts.launch_index().get(0));
    timed("collectives", || facts.collectives().len());
    timed("communication", || facts.comm().steps.len());
    timed("step kernels", || facts.step_kernels().rows.len());
    timed("host wait", || facts.host_wait().len());
    timed("launch statistics", || facts.launch_stats().count);
    timed("GEMM calls", || facts.gemms().len());
    timed("launches", || facts.launched_gpu(0).len());
    timed("operator tree", || {
        facts.operator_tree();
    });
    timed("GPU timeline", || facts.gpu_timeline().devices.len());
    timed("diff profile", || {
        kinetoscope_analysis::diff::profile_in(
            &trace,
            facts.operator_tree(),
            &facts.overview,
            facts.memory(),
        )
    });
    let config = Config::default();
    for rule in rules::all() {
        timed(rule.meta().code, || rule.check(&facts, &config).len());
    }
    timed("summary", || summary::summarize(&facts).steps);
    timed("FLOPs", || flops::estimate(&facts, None).flops_per_step);
    eprintln!(
        "{:>8.1} ms  all after the read",
        after_read.elapsed().as_secs_f64() * 1e3
    );
}
