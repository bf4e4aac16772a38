//! The web app (`docs/webui.md`): one self-contained HTML page — the template
//! `index.html`, the style `app.css`, the vendored chart library (`vendor/`, see
//! `vendor/VENDOR.md`) and the app's scripts, all inlined with `include_str!`; no
//! external URL, no Node build.
//!
//! The same page runs two ways: served by `kinetoscope serve` ([`web_app_html`]), it
//! asks the server's API (`docs/api.md`); written by `kinetoscope report --html`
//! ([`offline_html`]), it answers the same API paths from the documents embedded in it
//! (an [`OfflineBundle`]). The scripts set every text from a trace with `textContent`,
//! never as markup.

use kinetoscope_engine::OfflineBundle;

use crate::memory_html::escape_script_json;

/// The page template: `{{UPLOT_CSS}}`, `{{APP_CSS}}`, `{{BUNDLE}}`, `{{UPLOT_JS}}` and
/// `{{APP_JS}}` are replaced.
const TEMPLATE: &str = include_str!("index.html");

/// The app's scripts, in the order they run (one `<script>` element).
const APP_SCRIPTS: [&str; 5] = [
    include_str!("core.js"),
    include_str!("charts.js"),
    include_str!("pages.js"),
    include_str!("timeline.js"),
    include_str!("app.js"),
];

/// The page served by `kinetoscope serve`: it talks to `/api/v1/…` with the token of
/// its URL.
pub fn web_app_html() -> String {
    page("")
}

/// The offline page of `kinetoscope report --html`: the bundle's answers embedded as
/// compact JSON (control characters escaped by `serde_json`), escaped for a `<script>`
/// element ([`escape_script_json`]: `<`, `>`, `&`, U+2028, U+2029).
pub fn offline_html(bundle: &OfflineBundle) -> Result<String, serde_json::Error> {
    // Compact: the columns of the timeline's windows would triple in indented JSON.
    let json = serde_json::to_string(bundle)?;
    Ok(page(&escape_script_json(&json)))
}

/// The template with the assets and `bundle` (JSON already escaped, or empty) filled in.
/// Each placeholder is replaced once, in one pass, so text inserted for one placeholder
/// is never searched for another.
fn page(bundle: &str) -> String {
    let app_js = APP_SCRIPTS.join("\n");
    let parts: [(&str, &str); 5] = [
        ("{{UPLOT_CSS}}", include_str!("vendor/uPlot.min.css")),
        ("{{APP_CSS}}", include_str!("app.css")),
        ("{{BUNDLE}}", bundle),
        ("{{UPLOT_JS}}", include_str!("vendor/uPlot.iife.min.js")),
        ("{{APP_JS}}", &app_js),
    ];
    let mut out = String::with_capacity(TEMPLATE.len() + app_js.len() + bundle.len() + 64 * 1024);
    let mut rest = TEMPLATE;
    for (name, value) in parts {
        let (before, after) = rest
            .split_once(name)
            .expect("the template holds each placeholder once, in order");
        out.push_str(before);
        out.push_str(value);
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn online_page_is_self_contained() {
        let html = web_app_html();
        assert!(!html.contains("{{"), "a placeholder was left");
        // No external URL: nothing to fetch from a CDN.
        for needle in ["src=\"http", "href=\"http", "@import", "<script src"] {
            assert!(!html.contains(needle), "external reference {needle}");
        }
        assert!(html.contains("uPlot"));
        // Online, the bundle element is empty.
        assert!(
            html.contains("<script id=\"kinetoscope-bundle\" type=\"application/json\"></script>")
        );
    }

    #[test]
    fn scripts_cannot_close_their_element() {
        for s in APP_SCRIPTS {
            assert!(!s.to_ascii_lowercase().contains("</script"));
            assert!(!s.contains("<!--"));
        }
    }
}
