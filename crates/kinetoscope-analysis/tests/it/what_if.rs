//! The straggler what-if and the arrival skew per collective on small rank summaries
//! made by hand (times in µs, one step `ProfilerStep#1` from 0 to 100 µs per rank, one
//! shared clock), every expected value computed in the comments.

use kinetoscope_analysis::overview::Parts;
use kinetoscope_analysis::ranks::{
    compare_ranks, RankCollective, RankStep, RankSummary, RanksOptions, StragglerBasis,
};

const US: i64 = 1_000;

/// One call: (group, collective, arrival µs, end µs).
type Call = (&'static str, &'static str, i64, i64);

/// A rank with one step (0–100 µs; `comm_us` of it in collectives, the rest kernels)
/// and `calls` in that order.
fn rank(r: i64, comm_us: i64, calls: &[Call]) -> RankSummary {
    let mut groups: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let id = |table: &mut Vec<String>, s: &str| match table.iter().position(|x| x == s) {
        Some(i) => i as u32,
        None => {
            table.push(s.to_owned());
            (table.len() - 1) as u32
        }
    };
    let collectives = calls
        .iter()
        .map(|&(g, n, start, end)| RankCollective {
            group: id(&mut groups, g),
            name: id(&mut names, n),
            seq: None,
            comms_id: None,
            step: Some(1),
            call_ns: start * US,
            start_ns: start * US,
            end_ns: end * US,
        })
        .collect();
    RankSummary {
        path: format!("rank{r}.json"),
        rank: Some(r),
        world_size: Some(3),
        steps: vec![RankStep {
            name: "ProfilerStep#1".to_owned(),
            number: Some(1),
            start_ns: 0,
            dur_ns: 100 * US,
            parts_ns: Parts::from_array([(100 - comm_us) * US, 0, 0, comm_us * US, 0, 0, 0, 0]),
        }],
        groups,
        names,
        collectives,
        comm_kernel_ns: 0,
        warnings: Vec::new(),
    }
}

/// Two all-reduces per step. Rank 0 computes 10 then 20 µs, rank 1 12 then 22, rank 2
/// (the straggler) 25 then 30; each all-reduce ends 5 µs after the last arrival.
fn three_ranks(rank1_first: i64, rank2_extra: Option<Call>) -> Vec<RankSummary> {
    let ar = "allreduce";
    let mut r2 = vec![("g", ar, 25, 30)];
    r2.extend(rank2_extra);
    r2.push(("g", ar, 60, 70));
    vec![
        rank(0, 40, &[("g", ar, 10, 30), ("g", ar, 50, 70)]),
        rank(1, 40, &[("g", ar, rank1_first, 30), ("g", ar, 52, 70)]),
        rank(2, 15, &r2),
    ]
}

/// The what-if of the top straggler, by hand.
#[test]
fn what_if_by_hand() {
    struct Case {
        name: &'static str,
        ranks: Vec<RankSummary>,
        saving_us: f64,
        collectives: usize,
        caused_us: f64,
    }
    let cases = [
        // First all-reduce: arrivals 10, 12, 25; compute before it (from the step start
        // 0) 10, 12, 25, median 12: rank 2 would arrive at 12 = the second-last, saving
        // 25 − 12 = 13. Second: compute from the end at 30: 20, 22, 30, median 22, it
        // would arrive at 52 = the second-last, saving 60 − 52 = 8. Total 21 µs per
        // step; the wait it caused (the others' mean) is (15 + 13) / 2 + (10 + 8) / 2 =
        // 23 µs.
        Case {
            name: "one straggler",
            ranks: three_ranks(12, None),
            saving_us: 21.0,
            collectives: 2,
            caused_us: 23.0,
        },
        // Rank 1 is nearly as late at the first all-reduce (24): compute 10, 24, 25,
        // median 24, rank 2 would arrive at 24 = rank 1's arrival: saving 25 − 24 = 1
        // (rank 1 waited only 1 µs, so no more can be saved), plus 8 at the second:
        // 9 µs. Caused: (15 + 1) / 2 + 9 = 17 µs.
        Case {
            name: "two late ranks",
            ranks: three_ranks(24, None),
            saving_us: 9.0,
            collectives: 2,
            caused_us: 17.0,
        },
        // Rank 2 runs its own collective 30–40 µs (no other rank has it): before the
        // second all-reduce it computes 60 − 40 = 20 µs, the median is 20 (20, 22, 20):
        // at the median it still arrives at 60, it is late from communication, not
        // compute: saving 0 there, 13 at the first.
        Case {
            name: "late from its own collective",
            ranks: three_ranks(12, Some(("solo", "broadcast", 30, 40))),
            saving_us: 13.0,
            collectives: 1,
            caused_us: 23.0,
        },
    ];
    for c in cases {
        let r = compare_ranks(c.ranks, RanksOptions::default());
        assert_eq!(r.straggler_basis, StragglerBasis::CausedWait, "{}", c.name);
        let s = r.stragglers.first().expect(c.name);
        assert_eq!(s.rank, 2, "{}", c.name);
        assert_eq!(
            s.what_if_saving_per_step_ns,
            c.saving_us * 1e3,
            "{}",
            c.name
        );
        assert_eq!(s.what_if_saving_ns, c.saving_us * 1e3, "{}", c.name);
        assert_eq!(s.what_if_collectives, c.collectives, "{}", c.name);
        assert_eq!(s.caused_wait_per_step_ns, c.caused_us * 1e3, "{}", c.name);
        // Steps are 100 µs on every rank.
        assert_eq!(s.what_if_step_share, c.saving_us / 100.0, "{}", c.name);
        assert!(s.what_if_saving_per_step_ns <= s.caused_wait_per_step_ns);
    }
}

/// Without a collective matched across ranks (each rank's in its own group), from the
/// time outside collectives: rank 2 85 µs, the others 60 and 70, median 70: excess 15,
/// at most the median rank's time in collectives (of 50, 40, 5 µs: 40 → 15; of 20, 10,
/// 5 µs: 10 → 10).
#[test]
fn what_if_without_matched_collectives() {
    for (median_comm, saving_us) in [(40, 15.0), (10, 10.0)] {
        let ranks = vec![
            rank(0, median_comm + 10, &[("a", "allreduce", 10, 30)]),
            rank(1, median_comm, &[("b", "allreduce", 10, 30)]),
            rank(2, 5, &[("c", "allreduce", 10, 30)]),
        ];
        // Time outside collectives 60, 70 and 85 µs: the kernels, the step as long as
        // they and the collectives.
        let ranks: Vec<RankSummary> = ranks
            .into_iter()
            .zip([60, 70, 85])
            .map(|(mut s, outside)| {
                let comm = s.steps[0].parts_ns.communication;
                s.steps[0].dur_ns = outside * US + comm;
                s.steps[0].parts_ns.kernel = outside * US;
                s
            })
            .collect();
        let r = compare_ranks(ranks, RanksOptions::default());
        assert_eq!(r.straggler_basis, StragglerBasis::OutsideCollectives);
        let s = &r.stragglers[0];
        assert_eq!(s.rank, 2);
        assert_eq!(s.what_if_saving_per_step_ns, saving_us * 1e3);
        assert_eq!(s.what_if_collectives, 0);
    }
}

/// Arrival skew per collective kind and per call, bounded by `top_collectives`.
#[test]
fn skew_per_collective() {
    // All-reduces as in `three_ranks` (skews 15 and 10 µs, rank 2 last at both) and one
    // all-to-all (arrivals 75, 79, 76: skew 4, rank 1 last, 3 µs after rank 2).
    let a2a = [75, 79, 76];
    let ranks: Vec<RankSummary> = three_ranks(12, None)
        .into_iter()
        .zip(a2a)
        .map(|(mut s, at)| {
            s.names.push("alltoall".to_owned());
            s.collectives.push(RankCollective {
                name: 1,
                call_ns: at * US,
                start_ns: at * US,
                end_ns: 85 * US,
                ..s.collectives[0]
            });
            s
        })
        .collect();
    let r = compare_ranks(ranks.clone(), RanksOptions::default());
    let sk = &r.skew;
    assert_eq!((sk.matched, sk.kinds), (3, 2));
    // Skews 4, 10, 15: median 10, p90 (nearest rank: the 3rd) 15.
    assert_eq!((sk.median_skew_ns, sk.p90_skew_ns), (10e3, 15 * US));
    let ar = &sk.by_collective[0];
    assert_eq!((ar.collective.as_str(), ar.matched), ("allreduce", 2));
    assert_eq!((ar.total_skew_ns, ar.mean_skew_ns), (25 * US, 12.5e3));
    assert_eq!((ar.median_skew_ns, ar.max_skew_ns), (10 * US, 15 * US));
    assert_eq!((ar.most_often_last_rank, ar.most_often_last), (2, 2));
    let a2a = &sk.by_collective[1];
    assert_eq!(
        (a2a.collective.as_str(), a2a.max_skew_ns),
        ("alltoall", 4 * US)
    );
    assert_eq!(a2a.most_often_last_rank, 1);
    // Calls, largest skew first, with who arrived last and by how much.
    let calls: Vec<(i64, i64, i64)> = r
        .collectives
        .iter()
        .map(|c| (c.start_skew_ns / US, c.last_rank, c.last_margin_ns / US))
        .collect();
    assert_eq!(calls, [(15, 2, 13), (10, 2, 8), (4, 1, 3)]);

    let one = compare_ranks(
        ranks,
        RanksOptions {
            top_collectives: 1,
            ..RanksOptions::default()
        },
    );
    assert_eq!(
        (one.collectives.len(), one.skew.by_collective.len()),
        (1, 1)
    );
    assert_eq!(one.skew.kinds, 2);
    assert_eq!(one.skew.by_collective[0].collective, "allreduce");
}
