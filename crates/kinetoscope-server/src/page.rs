//! The app page served at `GET /`: the web UI (`kinetoscope_report::web`,
//! `docs/webui.md`), which calls the API with the token of its URL.

/// The page: one self-contained HTML document (scripts, styles and the chart library
/// inlined; no external URL).
pub fn web_app_html() -> String {
    kinetoscope_report::web::web_app_html()
}
