//! Debug helper: print the ancestor chain of the first event with a given name.
#![allow(clippy::print_stdout, missing_docs)]
use kinetoscope_advisor::facts::Facts;
use kinetoscope_trace::read::{read_trace, ReadOptions};
use kinetoscope_trace::CategoryKind;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trace = read_trace(args[1].as_ref(), &ReadOptions::default()).unwrap();
    let facts = Facts::new(&trace);
    let ev = facts.events(&[CategoryKind::CpuOp], |n| n == args[2]);
    for &i in ev
        .iter()
        .skip(args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0))
        .take(1)
    {
        println!("{} {}", i, facts.name(i));
        for a in facts.ancestors(i) {
            println!(
                "  <- {} [{:?}] ts={} dur={}",
                facts.name(a),
                trace.kind(kinetoscope_trace::EventId(a as u32)),
                trace.events.ts_ns[a],
                trace.events.dur_ns[a]
            );
        }
    }
}
