//! The results table as CSV (RFC 4180): a header line, then one line per run; a missing value
//! is an empty field, text is quoted where it holds a comma, a quote or a line break.

use std::fmt::Write;

use super::table::Table;

/// The table as CSV text.
pub fn to_csv(t: &Table) -> String {
    let mut out = String::new();
    let header: Vec<String> = t.columns.iter().map(|c| field(&c.name)).collect();
    out.push_str(&header.join(","));
    out.push('\n');
    for row in 0..t.rows() {
        for (i, c) in t.columns.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if let Some(v) = c.data.text(row) {
                let _ = write!(out, "{}", field(&v));
            }
        }
        out.push('\n');
    }
    out
}

/// One field, quoted if needed.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::table::{Column, ColumnData};

    #[test]
    fn quotes_only_where_needed_and_leaves_missing_values_empty() {
        let t = Table {
            columns: vec![
                Column { name: "a,b".into(), data: ColumnData::Int(vec![Some(1), None]) },
                Column {
                    name: "x".into(),
                    data: ColumnData::Text(vec![Some("say \"hi\"".into()), Some("ok".into())]),
                },
                Column { name: "r".into(), data: ColumnData::Real(vec![Some(0.5), Some(2.0)]) },
            ],
            ..Table::default()
        };
        assert_eq!(to_csv(&t), "\"a,b\",x,r\n1,\"say \"\"hi\"\"\",0.5\n,ok,2.0\n");
    }
}
