//! The eight-way step-time breakdown (the TensorBoard plugin's Overview): every instant of
//! a step is given to the highest-priority role active anywhere at that instant (Kernel,
//! Memcpy, Memset, Communication, Runtime, DataLoader, CPU Exec), and what is left is
//! Other, so the parts of a step add up to its (stretched) duration.

use kinetoscope_trace::{Launcher, Trace};

use crate::name_memo::NameMemo;
use rustc_hash::FxHashSet;

use super::classify::{host_role, is_communication_kernel, Class, Classes, HostRole};
use super::intervals::{add_span, merge, Span};
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
    // well. Each call's launcher is judged where it is found, not in a pass over
    // every event.
    let mut comm_launches: FxHashSet<i64> = FxHashSet::default();
    for (call, launcher) in trace.launch_links().iter() {
        let Launcher::Span(op) = launcher else {
            continue;
        };
        let corr = e.correlation.at(call.index());
        if corr != 0
            && role_of(classes.of(trace, op.index()), op.index()).0 == Some(HostRole::Communication)
        {
            comm_launches.insert(corr);
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
    steps
        .iter()
        .map(|s| Parts::from_array(step_parts(sets, s.start, s.end)))
        .collect()
}

/// The parts of `[lo, hi)`: each instant goes to the first role (in priority order)
/// whose set holds it, the rest to Other (last). One sweep over the sets' intervals
/// inside the window, without building the sets' differences.
fn step_parts(sets: &[Vec<Span>; ROLES], lo: i64, hi: i64) -> [i64; ROLES + 1] {
    let mut parts = [0i64; ROLES + 1];
    // Per role, its first interval that ends after the sweep's position.
    let mut at: [usize; ROLES] =
        std::array::from_fn(|r| sets[r].partition_point(|&(_, end)| end <= lo));
    let mut t = lo;
    while t < hi {
        // Who holds `t`, and where that may change: the end of the holder's interval,
        // or the next start of a role before it.
        let mut owner = ROLES;
        let mut next = hi;
        for (r, set) in sets.iter().enumerate() {
            while set.get(at[r]).is_some_and(|&(_, end)| end <= t) {
                at[r] += 1;
            }
            let Some(&(start, end)) = set.get(at[r]) else {
                continue;
            };
            if start <= t {
                owner = r;
                next = next.min(end);
                break;
            }
            next = next.min(start);
        }
        parts[owner] += next - t;
        t = next;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::super::intervals::{intersect, subtract, Measure};
    use super::*;

    /// The parts by set algebra: each role takes its set's part of what the roles
    /// before it left of the steps; Other is what no role took.
    fn by_set_algebra(sets: &[Vec<Span>; ROLES], steps: &[(i64, i64)]) -> Vec<[i64; ROLES + 1]> {
        let mut free = merge(steps.to_vec());
        let mut counted: Vec<Vec<Span>> = Vec::new();
        for set in sets {
            let c = intersect(set, &free);
            free = subtract(&free, &c);
            counted.push(c);
        }
        counted.push(free);
        steps
            .iter()
            .map(|&(lo, hi)| std::array::from_fn(|r| Measure::new(&counted[r]).len_in(lo, hi)))
            .collect()
    }

    #[test]
    fn the_sweep_agrees_with_set_algebra() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n) as i64
        };
        for round in 0..200 {
            let sets: [Vec<Span>; ROLES] = std::array::from_fn(|_| {
                let spans = (0..next(40))
                    .map(|_| {
                        let s = next(1000);
                        (s, s + next(60))
                    })
                    .collect();
                merge(spans)
            });
            // Disjoint steps in time order, some empty, some outside every set.
            let mut steps = Vec::new();
            let mut t = next(50) - 20;
            for _ in 0..1 + next(6) {
                let len = next(300);
                steps.push((t, t + len));
                t += len + next(3) * next(40);
            }
            let ranges: Vec<StepRange> = steps
                .iter()
                .map(|&(start, end)| StepRange {
                    name: String::new(),
                    number: None,
                    start,
                    end,
                    device_events: 0,
                })
                .collect();
            let swept: Vec<[i64; ROLES + 1]> = breakdown(&sets, &ranges)
                .iter()
                .map(|p| p.to_array())
                .collect();
            assert_eq!(swept, by_set_algebra(&sets, &steps), "round {round}");
            for (p, &(lo, hi)) in swept.iter().zip(&steps) {
                assert_eq!(p.iter().sum::<i64>(), hi - lo, "round {round}");
            }
        }
    }
}
