//! The diff as one self-contained HTML page (placeholder, filled in below).

use kinetoscope_engine::DiffDocument;

/// The HTML page.
pub fn to_html(doc: &DiffDocument) -> String {
    let _ = doc;
    String::new()
}
