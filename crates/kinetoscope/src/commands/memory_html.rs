//! `--html OUT` of `kinetoscope memory`: write the self-contained chart, refusing to
//! write over any input file.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The absolute, symlink-resolved form of `p`; for a file that does not exist yet, its
/// resolved folder joined with its name.
fn resolved(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let name = p.file_name()?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    parent.canonicalize().ok().map(|d| d.join(name))
}

/// Refuse when `out` resolves to one of `inputs` (or to a folder).
pub fn check_output(out: &Path, inputs: &[PathBuf]) -> anyhow::Result<()> {
    if out.is_dir() {
        anyhow::bail!("--html {}: is a folder; give a file name", out.display());
    }
    let target = resolved(out);
    for input in inputs {
        if target.is_some() && resolved(input) == target {
            anyhow::bail!(
                "--html {}: refusing to write over the input file {}",
                out.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// Write `html` to `out` after [`check_output`]; tell stderr where it went.
pub fn write(out: &Path, inputs: &[PathBuf], html: &str) -> anyhow::Result<()> {
    check_output(out, inputs)?;
    std::fs::write(out, html).with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// Charts of a snapshot: per device, active bytes and reserved-but-unused bytes over the
/// trace entries (time when recorded, else the entry index).
pub fn snapshot_charts(
    v: &kinetoscope_analysis::memory::snapshot::SnapshotView,
) -> Vec<kinetoscope_report::memory_html::HtmlChart> {
    use kinetoscope_analysis::memory::timeline::{CategoryPoint, CategorySeries};
    let mut charts = Vec::new();
    for d in &v.devices {
        let timed = !d.timeline.is_empty() && d.timeline.iter().all(|p| p.time_us.is_some());
        let points: Vec<CategoryPoint> = d
            .timeline
            .iter()
            .map(|p| CategoryPoint {
                ts_ns: if timed {
                    p.time_us.unwrap_or(0).saturating_mul(1000)
                } else {
                    // One "ms" per entry, so the axis reads as entry numbers.
                    (p.index as i64).saturating_mul(1_000_000)
                },
                bytes: vec![
                    p.active_bytes as i64,
                    p.reserved_bytes.saturating_sub(p.active_bytes) as i64,
                ],
            })
            .collect();
        let origin = points.first().map_or(0, |p| p.ts_ns);
        let series = CategorySeries::new(
            vec!["active".to_owned(), "reserved_unused".to_owned()],
            points,
            usize::MAX,
        );
        let note = if timed {
            "allocator trace replayed: active bytes and reserved-but-unused bytes (stacked = reserved)"
        } else {
            "allocator trace replayed (no times recorded: the x axis is the trace entry number, \
             shown as 1 ms per entry); active and reserved-but-unused bytes"
        };
        let mut chart = kinetoscope_report::memory_html::HtmlChart::from_series(
            format!("{} (CUDA memory snapshot)", d.device),
            format!("{note}; the peak marked is the most active bytes"),
            &series,
            origin,
        );
        // Mark the peak of active bytes, not of the stack (reserved).
        chart.peak = (0..chart.times.len())
            .max_by_key(|&i| (chart.values[i][0], std::cmp::Reverse(i)))
            .map(|i| kinetoscope_report::memory_html::HtmlPeak {
                t: chart.times[i],
                total: chart.values[i][0],
                by_category: chart.values[i].clone(),
            });
        charts.push(chart);
    }
    charts
}
