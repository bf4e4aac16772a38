//! Defects the reader got past, as the reader counted them (`ReadReport`): one result
//! per defect kind, its example the first location (byte offset and element index), and
//! the launch links it repaired.

use kinetoscope_trace::{DefectKind, Trace};

use super::{CheckKind, CheckOptions, CheckResult, Example, Firsts};

/// The check kind of a reader defect.
fn kind_of(d: DefectKind) -> CheckKind {
    match d {
        DefectKind::UnescapedQuote => CheckKind::UnescapedQuote,
        DefectKind::BareToken => CheckKind::BareToken,
        DefectKind::ControlCharacter => CheckKind::ControlCharacter,
        DefectKind::NegativeDuration => CheckKind::NegativeDuration,
        DefectKind::TruncatedTail => CheckKind::TruncatedTail,
        DefectKind::MalformedEvent => CheckKind::MalformedEvent,
        DefectKind::MissingTimestamp => CheckKind::MissingTimestamp,
        DefectKind::Oversized => CheckKind::Oversized,
    }
}

/// The reader's defects and repaired launch links of `trace`.
pub fn check(trace: &Trace, opts: &CheckOptions) -> Vec<CheckResult> {
    let mut out: Vec<CheckResult> = trace
        .report
        .defects
        .iter()
        .map(|d| {
            let mut first = Firsts::new(opts.examples);
            first.offer(0, || Example {
                byte_offset: Some(d.first_offset),
                element: Some(d.first_event_index),
                ..Example::default()
            });
            CheckResult::new(kind_of(d.kind), d.count, first)
        })
        .collect();
    let links = trace.report.launch_links;
    let repaired = links.relinked + links.unlinked + links.nested;
    out.push(CheckResult::new(
        CheckKind::RepairedLaunchLink,
        repaired,
        Firsts::new(0),
    ));
    out
}
