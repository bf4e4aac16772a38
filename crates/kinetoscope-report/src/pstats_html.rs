//! `kinetoscope pstats --flame OUT.html`: one self-contained page (inline script and
//! style, no network) drawing the estimated call tree as an icicle: width is time,
//! click a frame to zoom, hover for seconds and shares. The tree travels as JSON in a
//! `<script type="application/json">` element escaped by
//! [`crate::memory_html::script_json`]; the script inserts every name as text.

use kinetoscope_analysis::pstats::CallTree;

use crate::memory_html::{escape_html, script_json};

const STYLE: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px 24px; color: #222; }
h1 { font-size: 18px; margin: 0 0 4px 0; }
.source { color: #666; font-size: 12px; margin-bottom: 8px; word-break: break-all; }
.note { color: #666; font-size: 12px; margin: 4px 0 8px 0; }
#info { font-size: 12px; min-height: 16px; margin: 6px 0; font-family: ui-monospace, monospace; }
#flame { position: relative; width: 100%; }
.frame { position: absolute; height: 17px; overflow: hidden; white-space: nowrap; font-size: 11px;
  line-height: 17px; padding: 0 2px; box-sizing: border-box; cursor: pointer; border-radius: 2px;
  font-family: ui-monospace, monospace; }
button { font-size: 12px; }
"#;

/// The page for `tree`, titled with the input files.
pub fn render(inputs: &[String], tree: &CallTree) -> String {
    let data = script_json(tree);
    let source = inputs.join(", ");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>kinetoscope pstats</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>kinetoscope pstats: call tree</h1>\n<div class=\"source\">{s}</div>\n\
         <div class=\"note\">Estimated from pstats' caller edges (time shared along each \
         edge in proportion to its cumulative time; docs/pstats.md). Click a frame to \
         zoom. <button id=\"reset\">Reset zoom</button></div>\n<div id=\"info\"></div>\n\
         <div id=\"flame\"></div>\n<noscript>This chart needs JavaScript.</noscript>\n\
         <script id=\"kinetoscope-data\" type=\"application/json\">{data}</script>\n\
         <script>\n{js}</script>\n</body>\n</html>\n",
        s = escape_html(&source),
        js = include_str!("pstats_flame.js"),
    )
}
