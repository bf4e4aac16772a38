//! `kinetoscope explain CODE`: a rule's documentation, taken from `docs/rules.md` (which
//! a test regenerates from the rule files' doc comments, so the two never disagree).

use std::process::ExitCode;

use super::output::write_stdout;
use crate::args::ExplainArgs;

/// The rule catalogue as written in the repository.
const RULES_MD: &str = include_str!("../../../../docs/rules.md");

/// The `## CODE `Name`` section of the catalogue whose code or name matches `key`
/// (case-insensitive).
fn section(key: &str) -> Option<&'static str> {
    let key = key.trim().to_ascii_lowercase();
    let mut rest = RULES_MD;
    while let Some(i) = rest.find("\n## ") {
        rest = &rest[i + 1..];
        let end = rest[3..].find("\n## ").map_or(rest.len(), |j| j + 3);
        let heading = rest.lines().next().unwrap_or("").to_ascii_lowercase();
        let words: Vec<&str> = heading
            .trim_start_matches('#')
            .split_whitespace()
            .map(|w| w.trim_matches('`'))
            .collect();
        if words.iter().any(|w| *w == key) {
            return Some(rest[..end].trim_end());
        }
        rest = &rest[end..];
    }
    None
}

/// Print one rule's documentation, or the list of rules.
pub fn run(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let Some(code) = args.code else {
        let mut out = String::from("Advisor rules (kinetoscope explain CODE for one):\n");
        for m in kinetoscope_advisor::rules::catalogue() {
            out.push_str(&format!("  {}  {:<28} {}\n", m.code, m.name, m.summary));
        }
        write_stdout(&out)?;
        return Ok(ExitCode::SUCCESS);
    };
    match section(&code) {
        Some(text) => {
            write_stdout(&format!("{text}\n"))?;
            Ok(ExitCode::SUCCESS)
        }
        None => anyhow::bail!(
            "no rule `{code}`; `kinetoscope explain` lists the codes (GP005) and names \
             (HostBoundGaps)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::section;

    #[test]
    fn every_rule_has_a_section_found_by_code_and_by_name() {
        for m in kinetoscope_advisor::rules::catalogue() {
            let by_code = section(m.code).unwrap_or_else(|| panic!("{} missing", m.code));
            assert!(by_code.starts_with(&format!("## {}", m.code)), "{by_code}");
            assert_eq!(section(&m.name.to_ascii_lowercase()), Some(by_code));
        }
        assert_eq!(section("XX999"), None);
    }
}
