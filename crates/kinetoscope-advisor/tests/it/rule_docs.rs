//! Every rule file follows the catalogue's shape (docs/style.md §7): one file per rule
//! in `rules/<family>/`, a doc comment opening with `CODE Name` and the five sections,
//! and codes that are unique.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const SECTIONS: [&str; 5] = [
    "## What it finds",
    "## Why it matters",
    "## Evidence",
    "## Fix",
    "## Thresholds and sources",
];

/// Every rule file (`src/rules/<family>/<rule>.rs`, not `mod.rs`) with its text.
fn rule_files() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rules");
    let mut out = Vec::new();
    for family in std::fs::read_dir(&root).unwrap() {
        let family = family.unwrap().path();
        if !family.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&family).unwrap() {
            let f = f.unwrap().path();
            if f.file_name().unwrap() == "mod.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            out.push((f, text));
        }
    }
    out
}

#[test]
fn every_rule_file_documents_itself() {
    let mut codes = BTreeSet::new();
    let mut files = 0;
    for (f, text) in rule_files() {
        files += 1;
        let first = text.lines().next().unwrap_or_default();
        // `//! IN001 `DataloaderStall`.`
        let code = first
            .strip_prefix("//! ")
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("{}: no code on the first line", f.display()));
        assert!(
            text.contains(&format!("code: \"{code}\"")),
            "{}: META code differs from {code}",
            f.display()
        );
        assert!(codes.insert(code.to_owned()), "duplicate code {code}");
        for s in SECTIONS {
            assert!(
                text.contains(&format!("//! {s}")),
                "{}: missing {s}",
                f.display()
            );
        }
    }
    assert!(files >= 20, "{files} rule files");
    assert_eq!(codes.len(), kinetoscope_advisor::rules::catalogue().len());
}

/// `docs/rules.md` is generated from the rule files' doc comments; regenerate it with
/// `UPDATE_RULES_DOC=1 cargo test -p kinetoscope-advisor --test it rule_docs`.
#[test]
fn rules_page_is_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut rules: Vec<(String, String)> = Vec::new();
    for (f, text) in rule_files() {
        let doc: Vec<&str> = text
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .map(|l| {
                l.strip_prefix("//! ")
                    .or(l.strip_prefix("//!"))
                    .unwrap_or(l)
            })
            .collect();
        let (title, body) = doc.split_first().unwrap();
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        let body = body
            .iter()
            .map(|l| match l.strip_prefix("## ") {
                Some(h) => format!("**{h}.**"),
                None => (*l).to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let code = title.split_whitespace().next().unwrap().to_owned();
        let section = format!(
            "## {}\n\nSource: `crates/kinetoscope-advisor/{rel}`\n{}\n",
            title.trim_end_matches('.'),
            body.trim_end()
        );
        rules.push((code, section));
    }
    rules.sort();
    let mut page = String::from(
        "# Advisor rules\n\n\
         Generated from the rule files' doc comments by \
         `crates/kinetoscope-advisor/tests/it/rule_docs.rs` — do not edit by hand; run \
         `UPDATE_RULES_DOC=1 cargo test -p kinetoscope-advisor --test it rule_docs`.\n\n\
         `kinetoscope report` runs every rule; thresholds are in \
         `crates/kinetoscope-advisor/src/config.rs` (override with `--config FILE` or \
         `--set section.key=value`). Findings are ranked by estimated recoverable \
         time per step, then by severity; findings whose impact is unknown (0 ms) follow, \
         info last.\n\n| code | rule |\n|---|---|\n",
    );
    for (code, s) in &rules {
        let name = s.lines().next().unwrap().trim_start_matches("## ");
        let name = name.split_once(' ').map(|x| x.1).unwrap_or(name);
        page.push_str(&format!("| {code} | {name} |\n"));
    }
    for (_, s) in &rules {
        page.push('\n');
        page.push_str(s);
    }
    let path = root.join("../../docs/rules.md");
    if std::env::var_os("UPDATE_RULES_DOC").is_some() {
        std::fs::write(&path, &page).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == page,
        "docs/rules.md is out of date: UPDATE_RULES_DOC=1 cargo test -p kinetoscope-advisor --test it rule_docs"
    );
}
