//! The web UI in a real browser (headless Chromium over the DevTools protocol,
//! [`cdp`]): each page loads without exceptions or console errors, the numbers it shows
//! equal the documents' (read from the DOM, compared with the JSON the CLI prints for
//! the same view, which is the API's answer), and screenshots are kept in
//! `target/browser-screenshots/` for people to look at. [`offline`]: the file of
//! `report --html`; [`online`]: a real `kinetoscope serve`.
//!
//! Chromium is the one the `memory --html` test uses (`/usr/bin/chromium`, else on
//! `PATH`); without it these tests pass with a note, and fail when
//! `KINETOSCOPE_REQUIRE_BROWSER` is set, as CI does (`.ci/run`).

mod cdp;
mod offline;
mod online;

use std::path::{Path, PathBuf};

pub use cdp::Browser;

use crate::memory_html_browser::chromium_or_skip;

/// Where screenshots are kept (not committed).
pub fn screenshot_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .join("browser-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A browser, or `None` when Chromium is missing and not required.
pub fn browser() -> Option<Browser> {
    chromium_or_skip().map(|exe| Browser::launch(&exe, 1300, 1000))
}

/// Open `#page` of the app at `url` (which has no hash), wait until it rendered and
/// check it raised no error; keep a screenshot named `shot`.
pub fn open_page(b: &mut Browser, url: &str, page: &str, shot: &str) {
    open_page_hash(b, url, page, page, shot);
}

/// [`open_page`] with a whole hash (`page?options`) for `page`.
pub fn open_page_hash(b: &mut Browser, url: &str, hash: &str, page: &str, shot: &str) {
    b.clear_events();
    b.navigate("about:blank");
    b.navigate(&format!("{url}#{hash}"));
    b.wait_for(
        &format!("document.body && document.body.dataset.page === '{page}' && document.body.dataset.ready !== 'no'"),
        30,
    );
    let ready = b.eval("document.body.dataset.ready");
    let err = b.eval("(document.getElementById('page-error') || {}).textContent || ''");
    assert_eq!(ready, "yes", "page {page} failed: {err}");
    // Charts draw on the next frame; let them.
    b.eval("new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))");
    let errors = b.errors();
    assert!(errors.is_empty(), "page {page}: {errors:#?}");
    b.screenshot(&screenshot_dir().join(shot));
}

/// Texts of the elements matching a CSS selector.
pub fn texts(b: &mut Browser, selector: &str) -> Vec<String> {
    let v = b.eval(&format!(
        "Array.from(document.querySelectorAll({})).map(e => e.textContent)",
        serde_json::to_string(selector).unwrap()
    ));
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// A shown number with a unit (`75.30 ms`, `1.5 MiB`, `42.4 %`, `1,234`) as the base
/// unit (ns, bytes, 0–1 share, count) and half its last shown digit: the value it
/// stands for is within that of the exact one.
pub fn parse_shown(text: &str) -> (f64, f64) {
    let t = text.trim();
    let (num, unit) = t.split_once(' ').unwrap_or((t, ""));
    let num = num.replace(',', "");
    let value: f64 = num
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {text:?}"));
    let decimals = num.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let half = 0.5 * 10f64.powi(-decimals);
    let scale = match unit {
        "" | "ns" | "B" => 1.0,
        "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "%" => 0.01,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        u => panic!("unknown unit {u:?} in {text:?}"),
    };
    (value * scale, half * scale)
}

/// Assert that the shown `text` stands for `exact`.
pub fn assert_shows(text: &str, exact: f64, what: &str) {
    let (v, tol) = parse_shown(text);
    assert!(
        (v - exact).abs() <= tol * 1.0001 + 1e-9,
        "{what}: the page shows {text:?}, the document says {exact}"
    );
}
