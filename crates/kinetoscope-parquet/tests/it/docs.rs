//! `docs/parquet.md` documents every table and column the writer writes, with its type.

use std::path::Path;

use kinetoscope_parquet::schema::Type;
use kinetoscope_parquet::{Table, SCHEMA_VERSION};

/// The rows `| column | type | meaning |` of the table documented under `### \`name\``.
fn documented(doc: &str, table: &str) -> Vec<(String, String)> {
    let head = format!("### `{table}`");
    let start = doc
        .find(&head)
        .unwrap_or_else(|| panic!("no section {head}"));
    let section = &doc[start + head.len()..];
    let section = &section[..section.find("\n#").unwrap_or(section.len())];
    section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((name.to_owned(), cells.get(2)?.to_string()))
        })
        .collect()
}

#[test]
fn every_column_is_documented_with_its_type_in_order() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/parquet.md"),
    )
    .unwrap();
    assert!(doc.contains(&format!("## Schema version {SCHEMA_VERSION}")));
    for table in Table::ALL {
        let rows = documented(&doc, table.name());
        let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        let columns: Vec<&str> = table.columns().iter().map(|c| c.name).collect();
        assert_eq!(names, columns, "{}", table.name());
        for (c, (_, ty)) in table.columns().iter().zip(&rows) {
            let word = match c.ty {
                Type::I64 => "int64",
                Type::I32 => "int32",
                Type::Bool => "bool",
                Type::Str => "utf8",
                Type::Dict => "dictionary utf8",
            };
            let expected = if c.nullable {
                format!("{word}, null")
            } else {
                word.to_owned()
            };
            assert_eq!(ty, &expected, "{}.{}", table.name(), c.name);
        }
    }
}
