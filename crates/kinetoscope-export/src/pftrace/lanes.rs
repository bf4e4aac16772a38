//! Slices on a Perfetto track must nest: a slice that starts inside another ends inside
//! it. Kineto spans on one row do not always (GPU streams overlap by a few ns, threads
//! record ops that straddle each other), so each track's spans are split into lanes that
//! nest, first fit: lane 0 is the track itself, the others are tracks beside it.

use std::io;

use kinetoscope_trace::Trace;

/// At most this many lanes per track; a span that fits none goes to the last one
/// (adversarial traces only; Perfetto then closes slices as it can).
pub const MAX_LANES: usize = 64;

/// One begin or end of a slice, in the order Perfetto needs on its track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The span with this event index begins (at its start).
    Begin(u32),
    /// The span with this event index ends, at this time (ns, before any offset).
    End(u32, i64),
}

fn start_end(trace: &Trace, e: u32) -> (i64, i64) {
    let i = e as usize;
    let ts = trace.events.ts_ns[i];
    (ts, ts.saturating_add(trace.events.dur_ns.at(i)))
}

/// Sort `spans` (event indexes of one track) by start, longest first, and split them
/// into lanes in which they nest.
pub fn assign(trace: &Trace, spans: &mut [u32]) -> Vec<Vec<u32>> {
    spans.sort_unstable_by_key(|&e| {
        let (s, end) = start_end(trace, e);
        (s, std::cmp::Reverse(end), e)
    });
    let mut open: Vec<Vec<i64>> = Vec::new();
    let mut lanes: Vec<Vec<u32>> = Vec::new();
    for &e in spans.iter() {
        let (s, end) = start_end(trace, e);
        let mut chosen = None;
        for (k, stack) in open.iter_mut().enumerate() {
            while stack.last().is_some_and(|&top| top <= s) {
                stack.pop();
            }
            if stack.last().is_none_or(|&top| top >= end) {
                chosen = Some(k);
                break;
            }
        }
        let k = match chosen {
            Some(k) => k,
            None if open.len() < MAX_LANES => {
                open.push(Vec::new());
                lanes.push(Vec::new());
                open.len() - 1
            }
            None => MAX_LANES - 1,
        };
        open[k].push(end);
        lanes[k].push(e);
    }
    lanes
}

/// The begins and ends of one lane's spans (in [`assign`]'s order), each end before a
/// begin at the same time, to `f`.
pub fn for_each_step(
    trace: &Trace,
    lane: &[u32],
    mut f: impl FnMut(Step) -> io::Result<()>,
) -> io::Result<()> {
    let mut stack: Vec<(u32, i64)> = Vec::new();
    for &e in lane {
        let (s, end) = start_end(trace, e);
        while let Some(&(top, top_end)) = stack.last() {
            if top_end > s {
                break;
            }
            stack.pop();
            f(Step::End(top, top_end))?;
        }
        stack.push((e, end));
        f(Step::Begin(e))?;
    }
    while let Some((top, top_end)) = stack.pop() {
        f(Step::End(top, top_end))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kinetoscope_trace::{CatId, Phase, StrId, TrackId};

    fn trace_of(spans: &[(i64, i64)]) -> Trace {
        let mut t = Trace::default();
        for &(ts, dur) in spans {
            let ev = &mut t.events;
            ev.ts_ns.push(ts);
            ev.dur_ns.push(dur);
            ev.name.push(StrId(0));
            ev.cat.push(CatId(1));
            ev.phase.push(Phase::Complete);
            ev.track.push(TrackId(0));
            ev.external_id.push(0);
            ev.correlation.push(0);
        }
        t
    }

    #[test]
    fn straddling_spans_go_to_a_second_lane_and_nested_ones_stay() {
        // 0: [0, 100); 1: [10, 20) inside 0; 2: [90, 150) straddles 0's end, so it
        // goes beside; 3: [100, 110) starts as 0 ends: lane 0 again.
        let t = trace_of(&[(0, 100), (10, 10), (90, 60), (100, 10)]);
        let mut spans = vec![0, 1, 2, 3];
        let lanes = assign(&t, &mut spans);
        assert_eq!(lanes, vec![vec![0, 1, 3], vec![2]]);
        let mut steps = Vec::new();
        for_each_step(&t, &lanes[0], |s| {
            steps.push(s);
            Ok(())
        })
        .unwrap();
        use Step::*;
        assert_eq!(
            steps,
            vec![
                Begin(0),
                Begin(1),
                End(1, 20),
                End(0, 100),
                Begin(3),
                End(3, 110)
            ]
        );
    }
}
