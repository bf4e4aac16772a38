//! `kinetoscope ranks`: per-rank step times and breakdown side by side, the step table
//! across ranks, the collectives with the largest start skew, and the straggler ranking
//! with its evidence. CSV writes the per-rank table; JSON every field of
//! [`RanksReport`] (`docs/json.md`).

use kinetoscope_analysis::note::Note;
use kinetoscope_analysis::overview::Parts;
use kinetoscope_analysis::ranks::{ClockMode, MatchedBy, RanksReport, Straggler, StragglerBasis};
use kinetoscope_engine::RanksDocument;

use crate::format::{percent, us};
use crate::tabular::{Tabular, Value};

/// Nanoseconds as a µs value with one decimal.
fn us1(ns: f64) -> Value {
    Value::float(us(ns), 1)
}

fn rank_table(r: &RanksReport) -> Tabular {
    let mut headers: Vec<String> = ["rank", "steps", "mean_step_us", "max_step_us"]
        .map(String::from)
        .to_vec();
    headers.extend(Parts::<f64>::KEYS.iter().map(|k| format!("{k}_us")));
    headers.extend(
        [
            "outside_collectives_us",
            "clock_offset_us",
            "collectives",
            "matched",
            "total_wait_us",
            "arrived_last",
            "arrived_last_pct",
            "comm_kernel_us",
        ]
        .map(String::from),
    );
    let mut t = Tabular::new(headers);
    for row in &r.ranks {
        let mut v: Vec<Value> = vec![
            Value::Int(row.rank),
            row.steps.into(),
            us1(row.mean_step_ns),
            us1(row.max_step_ns as f64),
        ];
        v.extend(row.mean_parts_ns.to_array().map(us1));
        v.extend([
            us1(row.outside_collectives_ns),
            if row.clock_offset_applied {
                us1(row.clock_offset_ns as f64)
            } else {
                Value::Empty
            },
            row.collectives.into(),
            row.matched.into(),
            us1(row.total_wait_ns as f64),
            row.arrived_last.into(),
            Value::float(percent(row.arrived_last_share), 1),
            us1(row.comm_kernel_ns as f64),
        ]);
        t.push(v);
    }
    t
}

/// The per-rank table as CSV (µs).
pub fn to_csv(doc: &RanksDocument) -> String {
    rank_table(&doc.report).to_csv()
}

/// How the clocks were treated, in words.
fn clock_line(r: &RanksReport) -> String {
    let applied: Vec<String> = r
        .ranks
        .iter()
        .filter(|x| x.clock_offset_applied && x.clock_offset_ns != 0)
        .map(|x| format!("rank {}: {:+.1} µs", x.rank, us(x.clock_offset_ns as f64)))
        .collect();
    match r.clock.mode {
        ClockMode::None => "timestamps used as recorded (one shared clock assumed)".to_owned(),
        _ if applied.is_empty() => "timestamps used as recorded: no constant clock offset \
                                    between ranks fits the collective end times"
            .to_owned(),
        _ => format!(
            "clock offsets estimated from collective end times and subtracted: {}",
            applied.join(", ")
        ),
    }
}

/// A straggler's evidence, one line each.
fn straggler_evidence(s: &Straggler, basis: StragglerBasis) -> Vec<String> {
    let mut out = vec![format!(
        "what-if: computing like the median rank, each step would take {:.1} µs less \
         ({:.1}% of the median step{})",
        us(s.what_if_saving_per_step_ns),
        percent(s.what_if_step_share),
        match basis {
            StragglerBasis::CausedWait => format!(
                "; the others' wait shortened at {} collective(s)",
                s.what_if_collectives
            ),
            StragglerBasis::OutsideCollectives => {
                "; from its time outside collectives, at most the median rank's time in them"
                    .to_owned()
            }
        }
    )];
    match basis {
        StragglerBasis::CausedWait => out.push(format!(
            "arrived last at {} of {} matched collectives ({:.0}%); the other ranks waited \
             {:.1} µs in all for it ({:.1} µs per step)",
            s.arrived_last,
            s.matched,
            percent(s.arrived_last_share),
            us(s.caused_wait_ns),
            us(s.caused_wait_per_step_ns)
        )),
        StragglerBasis::OutsideCollectives => out.push(format!(
            "no collective matched: outside collectives {:.1} µs per step longer than the \
             other ranks on average",
            us(s.caused_wait_per_step_ns)
        )),
    }
    out.push(format!(
        "outside collectives {:.1} µs per step vs median rank {:.1} µs ({:+.1}%)",
        us(s.outside_collectives_ns),
        us(s.median_outside_collectives_ns),
        percent(s.outside_excess_ratio)
    ));
    if let Some(p) = &s.slower_phase {
        out.push(format!(
            "{p} takes {:.1} µs/step more than on the median rank{}",
            us(s.slower_phase_excess_ns),
            s.slower_phase_excess_ratio
                .map(|x| format!(" ({:+.1}%)", percent(x)))
                .unwrap_or_default()
        ));
    }
    out
}

/// The warnings of the comparison, then the ranks' own: at most
/// [`MAX_RANK_WARNINGS`] of those (a folder of a thousand ranks has as many), with the
/// count of the others (all are in the JSON).
fn push_warnings(out: &mut String, warnings: &[Note]) {
    let (own, in_rank): (Vec<&Note>, Vec<&Note>) = warnings
        .iter()
        .partition(|w| !matches!(w, Note::InRank { .. }));
    for w in own.iter().chain(in_rank.iter().take(MAX_RANK_WARNINGS)) {
        out.push_str(&format!("warning: {}\n", crate::note::text(w)));
    }
    if in_rank.len() > MAX_RANK_WARNINGS {
        out.push_str(&format!(
            "warning: {} more warnings of single ranks (--format json lists them all)\n",
            in_rank.len() - MAX_RANK_WARNINGS
        ));
    }
}

/// Warnings of single ranks shown in the terminal.
const MAX_RANK_WARNINGS: usize = 20;

/// Render as a terminal report; `top` cuts the step and collective tables (0 = all).
pub fn to_table(doc: &RanksDocument, top: usize) -> String {
    let r = &doc.report;
    let n = if top == 0 { usize::MAX } else { top };
    let mut out = format!("{}: {} ranks\n", doc.input, r.ranks.len());
    out.push_str(&format!("clocks: {}\n", clock_line(r)));
    let full = rank_table(r);
    let split = 5 + Parts::<f64>::KEYS.len();
    let mut steps_t =
        Tabular::new(full.headers[..split].to_vec()).titled("Per rank: steps (means per step, µs)");
    let mut head = vec![full.headers[0].clone()];
    head.extend(full.headers[split..].iter().cloned());
    let mut comm_t = Tabular::new(head).titled("Per rank: collectives (µs)");
    for row in &full.rows {
        steps_t.push(row[..split].to_vec());
        let mut v = vec![row[0].clone()];
        v.extend(row[split..].iter().cloned());
        comm_t.push(v);
    }
    out.push_str(&steps_t.to_terminal());
    out.push_str(&comm_t.to_terminal());

    let mut t = Tabular::new([
        "step",
        "ranks",
        "min_us",
        "median_us",
        "max_us",
        "slowest_rank",
    ])
    .titled("Steps across ranks");
    for s in r.steps.iter().take(n) {
        t.push(vec![
            s.name.clone().into(),
            s.ranks.into(),
            us1(s.min_ns as f64),
            us1(s.median_ns),
            us1(s.max_ns as f64),
            Value::Int(s.slowest_rank),
        ]);
    }
    out.push_str(&t.to_terminal());

    let sk = &r.skew;
    out.push_str(&format!(
        "collectives matched across ranks: {} (unmatched {}); start skew mean {:.1} µs, \
         median {:.1} µs, p90 {:.1} µs, max {:.1} µs\n",
        sk.matched,
        sk.unmatched,
        us(sk.mean_skew_ns),
        us(sk.median_skew_ns),
        us(sk.p90_skew_ns as f64),
        us(sk.max_skew_ns as f64)
    ));
    if !sk.by_collective.is_empty() {
        let mut t = Tabular::new([
            "collective",
            "process_group",
            "matched",
            "mean_skew_us",
            "median_skew_us",
            "p90_skew_us",
            "max_skew_us",
            "most_often_last",
        ])
        .titled(format!(
            "Start skew per collective ({} of {} kinds, largest total skew first)",
            sk.by_collective.len(),
            sk.kinds
        ));
        for c in sk.by_collective.iter().take(n) {
            t.push(vec![
                c.collective.clone().into(),
                c.process_group.clone().into(),
                c.matched.into(),
                us1(c.mean_skew_ns),
                us1(c.median_skew_ns as f64),
                us1(c.p90_skew_ns as f64),
                us1(c.max_skew_ns as f64),
                Value::Text(format!(
                    "rank {} ({}×)",
                    c.most_often_last_rank, c.most_often_last
                )),
            ]);
        }
        out.push_str(&t.to_terminal());
    }
    if !r.collectives.is_empty() {
        let mut t = Tabular::new([
            "collective",
            "process_group",
            "index",
            "ranks",
            "start_skew_us",
            "last_rank",
            "last_margin_us",
        ])
        .titled("Collectives with the largest start skew");
        for c in r.collectives.iter().take(n) {
            t.push(vec![
                c.collective.clone().into(),
                c.process_group.clone().into(),
                Value::Text(match (c.matched_by, c.index, c.step) {
                    (MatchedBy::CommsId, ..) => {
                        format!("id {:x}", c.comms_id.unwrap_or_default())
                    }
                    (MatchedBy::Seq, Some(i), _) => format!("seq {i}"),
                    (_, Some(k), Some(step)) => format!("#{k} in step {step}"),
                    (_, k, _) => format!("#{}", k.unwrap_or_default()),
                }),
                c.ranks.into(),
                us1(c.start_skew_ns as f64),
                Value::Int(c.last_rank),
                us1(c.last_margin_ns as f64),
            ]);
        }
        out.push_str(&t.to_terminal());
    }
    if r.stragglers.is_empty() {
        out.push_str("stragglers: none found\n");
    } else {
        out.push_str("Stragglers (the ranks the others wait for, most wait caused first):\n");
        for (i, s) in r.stragglers.iter().enumerate() {
            out.push_str(&format!("  {}. rank {}\n", i + 1, s.rank));
            for e in straggler_evidence(s, r.straggler_basis) {
                out.push_str(&format!("     - {e}\n"));
            }
        }
    }
    push_warnings(&mut out, &r.warnings);
    crate::note::push_read_failures(&mut out, &doc.errors);
    out
}
