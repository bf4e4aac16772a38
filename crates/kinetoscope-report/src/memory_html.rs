//! `kinetoscope memory PATH --html OUT`: one self-contained HTML file (inline CSS and a
//! small hand-written SVG script, `memory_html.js`; no network, no CDN) with a stacked
//! area chart per device: bytes per category (traces and memory timelines) or active /
//! reserved-but-unused bytes (snapshots), the peak marked with its value, details on
//! hover, zoom with the wheel or by dragging a range.
//!
//! The data travel as JSON in a `<script type="application/json">` element; the
//! script renders the legend, the peak label and the chart into the DOM.

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

fn escape_html(s: &str) -> String {
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

/// The whole page: `title` as heading, `source` (the input path) under it, one chart
/// each.
pub fn render(title: &str, source: &str, charts: &[HtmlChart]) -> String {
    let data = serde_json::to_string(&Page { source, charts })
        .expect("chart data serialise")
        // Inside <script>, "</" could close the element; JSON allows "<\/".
        .replace("</", "<\\/");
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
}
