//! `kinetoscope memory PATH --html OUT`: one self-contained HTML file (inline CSS and a
//! small hand-written SVG script, `memory_html.js`; no network, no CDN) with a stacked
//! area chart per device: bytes per category (traces and memory timelines) or active /
//! reserved-but-unused bytes (snapshots), the peak marked with its value, details on
//! hover, zoom with the wheel or by dragging a range.
//!
//! The data travel as JSON in a `<script type="application/json">` element, with `<`,
//! `>`, `&`, U+2028 and U+2029 written as `\uNNNN` escapes so no name or path can end
//! the element or open a comment in it ([`script_json`]); the script renders the
//! legend, the peak label and the chart into the DOM, setting every text with
//! `textContent`, never as markup.

use kinetoscope_analysis::memory::timeline::CategorySeries;
use serde::Serialize;

/// The colour of a category: PyTorch's `_CATEGORY_TO_COLORS` for the timeline's 8,
/// light grey for `untracked`, a fixed palette for anything else.
pub fn color_for(name: &str, k: usize) -> String {
    let c = match name {
        "parameter" => "darkgreen",
        "optimizer_state" => "goldenrod",
        "input" => "black",
        "temporary" => "mediumpurple",
        "activation" => "red",
        "gradient" => "mediumblue",
        "autograd_detail" => "royalblue",
        "unknown" => "grey",
        "untracked" => "#c8c8c8",
        "allocated" | "active" => "steelblue",
        "reserved_unused" => "#f0b27a",
        _ => {
            const PALETTE: [&str; 8] = [
                "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                "#9c755f",
            ];
            PALETTE[k % PALETTE.len()]
        }
    };
    c.to_owned()
}

/// The peak of a chart.
#[derive(Clone, Debug, Serialize)]
pub struct HtmlPeak {
    /// ns since the chart's origin.
    pub t: i64,
    /// Total bytes.
    pub total: i64,
    /// Bytes per series at the peak.
    pub by_category: Vec<i64>,
}

/// One chart: stacked series over time.
#[derive(Clone, Debug, Serialize)]
pub struct HtmlChart {
    /// Heading.
    pub title: String,
    /// A line under the heading (how the data were obtained).
    pub note: String,
    /// Series names, bottom of the stack first.
    pub categories: Vec<String>,
    /// CSS colours, one per series.
    pub colors: Vec<String>,
    /// Times, ns since the chart's origin (small enough for JavaScript numbers).
    pub times: Vec<i64>,
    /// Bytes per series at each time.
    pub values: Vec<Vec<i64>>,
    /// The peak, when there are points.
    pub peak: Option<HtmlPeak>,
}

impl HtmlChart {
    /// A chart of a category series; times become ns since `origin_ns`.
    pub fn from_series(title: String, note: String, s: &CategorySeries, origin_ns: i64) -> Self {
        HtmlChart {
            title,
            note,
            colors: s
                .categories
                .iter()
                .enumerate()
                .map(|(k, n)| color_for(n, k))
                .collect(),
            categories: s.categories.clone(),
            times: s.points.iter().map(|p| p.ts_ns - origin_ns).collect(),
            values: s.points.iter().map(|p| p.bytes.clone()).collect(),
            peak: s.peak.as_ref().map(|p| HtmlPeak {
                t: p.ts_ns - origin_ns,
                total: p.total_bytes,
                by_category: p.by_category.clone(),
            }),
        }
    }
}

#[derive(Serialize)]
struct Page<'a> {
    source: &'a str,
    charts: &'a [HtmlChart],
}

pub(crate) fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px 24px; color: #222; }
h1 { font-size: 18px; margin: 0 0 4px 0; }
.source { color: #666; font-size: 12px; margin-bottom: 12px; word-break: break-all; }
.chart { margin: 18px 0 28px 0; }
.chart-title { font-weight: 600; font-size: 15px; }
.chart-note { color: #666; font-size: 12px; margin: 2px 0 6px 0; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; font-size: 12px; margin: 6px 0; }
.legend-item { display: flex; align-items: center; gap: 5px; }
.swatch { width: 12px; height: 12px; display: inline-block; border-radius: 2px; }
.legend-value { color: #666; }
.peak-label { color: #b00; font-weight: 600; font-size: 13px; margin: 4px 0; }
.controls { display: flex; gap: 12px; align-items: center; font-size: 12px; color: #666; }
.plot { border: 1px solid #eee; user-select: none; max-width: 100%; height: auto; }
.tick { font-size: 11px; fill: #555; }
.axis-label { font-size: 12px; fill: #333; }
.peak-text { font-size: 12px; fill: #b00; font-weight: 600; }
.tooltip { position: absolute; background: rgba(255,255,255,0.96); border: 1px solid #bbb;
  padding: 6px 8px; font-size: 12px; pointer-events: none; box-shadow: 0 1px 4px rgba(0,0,0,.2); }
.tip-head { font-weight: 600; }
"#;

/// JSON text safe inside a `<script>` element: `<`, `>` and `&` (which could close
/// the element, open an HTML comment or start a character reference) and U+2028 and
/// U+2029 (line terminators in older JavaScript) become `\uNNNN` escapes. They occur
/// only inside JSON strings, where the escapes mean the same characters.
pub fn script_json(value: &impl Serialize) -> String {
    escape_script_json(&serde_json::to_string(value).expect("chart data serialise"))
}

/// JSON text made safe inside a `<script>` element, as [`script_json`] does: `<`, `>`,
/// `&`, U+2028 and U+2029 (which occur only inside JSON strings) become `\uNNNN`.
pub fn escape_script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            _ => out.push(c),
        }
    }
    out
}

/// The whole page: `title` as heading, `source` (the input path) under it, one chart
/// each.
pub fn render(title: &str, source: &str, charts: &[HtmlChart]) -> String {
    let data = script_json(&Page { source, charts });
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n\
         <div class=\"source\">{s}</div>\n<div id=\"charts\"></div>\n\
         <noscript>This chart needs JavaScript.</noscript>\n\
         <script id=\"kinetoscope-data\" type=\"application/json\">{data}</script>\n\
         <script>\n{js}</script>\n</body>\n</html>\n",
        t = escape_html(title),
        s = escape_html(source),
        js = include_str!("memory_html.js"),
    )
}

/// Charts of traces' memory views: one per trace and device (inferred categories, else
/// allocated bytes).
pub fn trace_charts(doc: &kinetoscope_engine::MemoryDocument) -> Vec<HtmlChart> {
    use kinetoscope_analysis::memory::timeline::CategoryPoint;
    let multi = doc.traces.len() > 1;
    let mut charts = Vec::new();
    for v in &doc.traces {
        for d in &v.devices {
            let title = if multi {
                format!("{} · {}", v.path, d.device)
            } else {
                d.device.clone()
            };
            let chart = match &d.categories {
                Some(c) => HtmlChart::from_series(
                    title,
                    format!("categories inferred by kinetoscope: {}", c.method),
                    &c.series,
                    v.origin_ns,
                ),
                None => {
                    let points = d
                        .curve
                        .points
                        .iter()
                        .map(|p| CategoryPoint {
                            ts_ns: p.ts_ns,
                            bytes: vec![p.allocated_bytes],
                        })
                        .collect();
                    HtmlChart::from_series(
                        title,
                        "allocated bytes (no addresses recorded: no categories)".to_owned(),
                        &CategorySeries::new(vec!["allocated".to_owned()], points, usize::MAX),
                        v.origin_ns,
                    )
                }
            };
            charts.push(chart);
        }
    }
    charts
}

/// The chart of a memory-timeline view.
pub fn timeline_chart(v: &kinetoscope_analysis::memory::timeline::TimelineView) -> HtmlChart {
    HtmlChart::from_series(
        format!("PyTorch memory timeline ({} rows)", v.rows),
        "categories as labelled by PyTorch's export_memory_timeline".to_owned(),
        &v.series,
        v.origin_ns,
    )
}

/// Charts of a snapshot: per device, active bytes and reserved-but-unused bytes over the
/// trace entries (time when recorded, else the entry index).
pub fn snapshot_charts(v: &kinetoscope_analysis::memory::snapshot::SnapshotView) -> Vec<HtmlChart> {
    use kinetoscope_analysis::memory::timeline::CategoryPoint;
    let mut charts = Vec::new();
    for d in &v.devices {
        let timed = !d.timeline.is_empty() && d.timeline.iter().all(|p| p.time_ns.is_some());
        let points: Vec<CategoryPoint> = d
            .timeline
            .iter()
            .map(|p| CategoryPoint {
                ts_ns: if timed {
                    p.time_ns.unwrap_or(0)
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
        let mut chart = HtmlChart::from_series(
            format!("{} (CUDA memory snapshot)", d.device),
            format!("{note}; the peak marked is the most active bytes"),
            &series,
            origin,
        );
        // Mark the peak of active bytes, not of the stack (reserved).
        chart.peak = (0..chart.times.len())
            .max_by_key(|&i| (chart.values[i][0], std::cmp::Reverse(i)))
            .map(|i| HtmlPeak {
                t: chart.times[i],
                total: chart.values[i][0],
                by_category: chart.values[i].clone(),
            });
        charts.push(chart);
    }
    charts
}

#[cfg(test)]
mod tests {
    use super::*;
    use kinetoscope_analysis::memory::timeline::CategoryPoint;

    #[test]
    fn self_contained_page() {
        let s = CategorySeries::new(
            vec!["parameter".into(), "activation".into()],
            vec![
                CategoryPoint {
                    ts_ns: 1000,
                    bytes: vec![10, 0],
                },
                CategoryPoint {
                    ts_ns: 2000,
                    bytes: vec![10, 20],
                },
            ],
            100,
        );
        let c = HtmlChart::from_series("CPU".into(), "</script>".into(), &s, 1000);
        assert_eq!(c.times, vec![0, 1000]);
        assert_eq!(c.peak.as_ref().unwrap().total, 30);
        let html = render("memory <x>", "a.json", &[c]);
        assert!(html.contains("<title>memory &lt;x&gt;</title>"));
        assert!(!html.contains("http://") || !html.contains("src=\"http"));
        assert!(!html.contains("<script src"));
        assert_eq!(html.matches("</script>").count(), 2);
    }

    #[test]
    fn embedded_json_escapes_markup_and_line_separators() {
        let hostile = "a.json<!--<script></script>&amp;\u{2028}\u{2029}>";
        let json = script_json(&Page {
            source: hostile,
            charts: &[],
        });
        for c in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
            assert!(!json.contains(c), "{c:?} raw in {json}");
        }
        assert!(json.contains("\\u003c!--\\u003cscript\\u003e"), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(back["source"], hostile);
        let html = render("t", hostile, &[]);
        assert_eq!(html.matches("<script").count(), 2);
        assert!(!html.contains("<!--"));
    }
}
