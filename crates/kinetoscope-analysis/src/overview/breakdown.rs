//! The eight-way step-time breakdown (the TensorBoard plugin's Overview): every instant of
//! a step is given to the highest-priority role active anywhere at that instant (Kernel,
//! Memcpy, Memset, Communication, Runtime, DataLoader, CPU Exec), and what is left is
//! Other, so the parts of a step add up to its (stretched) duration.

use kinetoscope_trace::{EventId, Launcher, Trace};

use crate::name_memo::NameMemo;
use rustc_hash::FxHashSet;

use super::classify::{host_role, is_communication_kernel, Class, Classes, HostRole};
use super::intervals::{add_span, intersect, merge, subtract, Measure, Span};
use super::step_ranges::StepRange;
use super::Parts;

/// Number of roles with events (all but Other).
const ROLES: usize = 7;

/// The merged interval set of each role, in priority order, over the whole trace.
pub(crate) fn role_sets(trace: &Trace, classes: &Classes) -> [Vec<Span>; ROLES] {
    let e = &trace.events;
    // What a name means, decided once per name: its host role as an operator or
    // annotation, as a Python frame, and whether it names a communication kernel.
    let mut by_name = NameMemo::new(trace, |n| {
        (
            host_role(Class::Op, n),
            host_role(Class::Python, n),
            is_communication_kernel(n),
        )
    });
    let mut role_of = |class: Class, i: usize| {
        let (op, python, comm_kernel) = by_name.get(e.name[i]);
        let role = match class {
            Class::Op | Class::Annotation => op,
            Class::Python => python,
            _ => None,
        };
        (role, comm_kernel)
    };
    // Host communication calls: kernels they launched are communication (the plugin's
    // link by External id, here the trace's validated launch link), found by the
    // correlation ids of their runtime calls; NCCL kernels are recognised by name as
    // well.
    let mut comm_ops: FxHashSet<EventId> = FxHashSet::default();
    for i in 0..e.len() {
        let class = classes.of(trace, i);
        if role_of(class, i).0 == Some(HostRole::Communication) {
            comm_ops.insert(EventId(i as u32));
        }
    }
    let mut comm_launches: FxHashSet<i64> = FxHashSet::default();
    if !comm_ops.is_empty() {
        for (call, launcher) in trace.launch_links().iter() {
            let corr = e.correlation.at(call.index());
            if matches!(launcher, Launcher::Span(op) if comm_ops.contains(&op)) && corr != 0 {
                comm_launches.insert(corr);
            }
        }
    }
    let mut sets: [Vec<Span>; ROLES] = Default::default();
    for i in 0..e.len() {
        let class = classes.of(trace, i);
        let span = (e.ts_ns[i], e.ts_ns[i] + e.dur_ns.at(i));
        let role = match class {
            Class::Kernel => {
                if comm_launches.contains(&e.correlation.at(i)) || role_of(class, i).1 {
                    3
                } else {
                    0
                }
            }
            Class::Memcpy => 1,
            Class::Memset => 2,
            Class::Launch => 4,
            Class::Op | Class::Annotation | Class::Python => match role_of(class, i).0 {
                Some(HostRole::DataLoader) => 5,
                Some(HostRole::Communication) => 3,
                Some(HostRole::CpuExec) => 6,
                Some(HostRole::Step) | None => continue,
            },
            Class::Ignored => continue,
        };
        add_span(&mut sets[role], span);
    }
    sets.map(merge)
}

/// Each step's parts, ns, in step order.
pub(crate) fn breakdown(sets: &[Vec<Span>; ROLES], steps: &[StepRange]) -> Vec<Parts<i64>> {
    let all_steps = merge(steps.iter().map(|s| (s.start, s.end)).collect());
    let mut free = all_steps;
    let mut counted: Vec<Vec<Span>> = Vec::with_capacity(ROLES + 1);
    for set in sets {
        let c = intersect(set, &free);
        free = subtract(&free, &c);
        counted.push(c);
    }
    counted.push(free);
    let measures: Vec<Measure> = counted.iter().map(|c| Measure::new(c)).collect();
    steps
        .iter()
        .map(|s| {
            let mut parts = [0i64; ROLES + 1];
            for (p, m) in parts.iter_mut().zip(&measures) {
                *p = m.len_in(s.start, s.end);
            }
            Parts::from_array(parts)
        })
        .collect()
}
