//! Display helpers for the pages: number and date formatting, and generic tables from the JSON
//! form of the report (TCP flows and the SCTP/TCP comparison, whatever fields they carry).

use analyzer::report::CaptureReport;
use serde_json::Value;

pub const NONE: &str = "—";

/// A value exactly as the CLI's JSON writes it.
pub fn exact(v: f64) -> String {
    serde_json::to_string(&v).unwrap_or_else(|_| v.to_string())
}

/// At most `decimals` decimals, trailing zeros dropped.
pub fn round(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

pub fn ms(v: Option<f64>) -> String {
    v.map_or(NONE.to_string(), |v| round(v, 3))
}

pub fn secs(v: f64) -> String {
    round(v, 6)
}

pub fn opt_s(v: Option<f64>) -> String {
    v.map_or(NONE.to_string(), secs)
}

pub fn pct(v: Option<f64>) -> String {
    v.map_or(NONE.to_string(), |v| format!("{}%", round(v * 100.0, 1)))
}

pub fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(NONE.to_string(), |v| v.to_string())
}

/// `2026-11-30 05:29:01 UTC` from Unix seconds.
pub fn date(unix: f64) -> String {
    let secs = unix.floor() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The TCP flows of the report as JSON (and only them).
pub fn tcp_flows_value(r: &CaptureReport) -> Value {
    serde_json::to_value(&r.tcp_flows).unwrap_or(Value::Null)
}

/// Number of TCP flows, when the report has `tcp_flows`.
pub fn tcp_flow_count(r: &CaptureReport) -> Option<usize> {
    Some(r.tcp_flows.len())
}

/// A table of strings built from JSON.
#[derive(Debug, Clone, Default)]
pub struct JsonTable {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// One JSON value as a cell: scalars as written, arrays by length, objects by key count.
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => NONE.to_string(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => round(f, 3),
            _ => n.to_string(),
        },
        Value::String(s) => s.clone(),
        Value::Array(a) => {
            if a.iter().all(|x| !x.is_object() && !x.is_array()) && a.len() <= 6 {
                a.iter().map(cell).collect::<Vec<_>>().join(" ")
            } else {
                format!("[{} items]", a.len())
            }
        }
        Value::Object(o) => {
            // A distribution ({n, min, median, ...}) reads best as its median.
            if let Some(m) = o.get("median") {
                format!("median {}", cell(m))
            } else {
                o.iter()
                    .filter(|(_, v)| !v.is_object() && !v.is_array())
                    .take(4)
                    .map(|(k, v)| format!("{k}: {}", cell(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        }
    }
}

/// An array of objects as a table: one row per object, the union of their keys as columns
/// (at most `max_cols`).
pub fn array_table(title: &str, v: &Value, max_cols: usize) -> Option<JsonTable> {
    let arr = v.as_array()?;
    if arr.is_empty() || !arr.iter().all(Value::is_object) {
        return None;
    }
    // Nested lists of objects (and objects that are not distributions) do not fit in a cell.
    let nested = |v: &Value| match v {
        Value::Array(a) => a.iter().any(|x| x.is_object() || x.is_array()),
        Value::Object(o) => !o.contains_key("median"),
        _ => false,
    };
    let mut columns: Vec<String> = Vec::new();
    for o in arr.iter().filter_map(Value::as_object) {
        for (k, v) in o {
            if !columns.contains(k) && columns.len() < max_cols && !nested(v) {
                columns.push(k.clone());
            }
        }
    }
    let rows = arr
        .iter()
        .filter_map(Value::as_object)
        .map(|o| {
            columns
                .iter()
                .map(|c| o.get(c).map_or(NONE.to_string(), cell))
                .collect()
        })
        .collect();
    Some(JsonTable {
        title: title.to_string(),
        columns,
        rows,
    })
}

/// Rows become columns: metric names down the side, one column per item (side-by-side view).
pub fn transpose(t: &JsonTable, label_col: Option<&str>) -> JsonTable {
    let label_idx = label_col.and_then(|l| t.columns.iter().position(|c| c == l));
    let columns = t
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| label_idx.map_or(format!("#{i}"), |k| r[k].clone()))
        .collect();
    let rows = t
        .columns
        .iter()
        .enumerate()
        .filter(|(j, _)| Some(*j) != label_idx)
        .map(|(j, c)| {
            let mut row = vec![c.clone()];
            row.extend(t.rows.iter().map(|r| r[j].clone()));
            row
        })
        .collect();
    JsonTable {
        title: t.title.clone(),
        columns,
        rows,
    }
}

/// The analyzer's `comparison` rows side by side: one column per SCTP association direction or
/// TCP connection direction, one row per metric.
pub fn comparison_table(v: &Value) -> Option<JsonTable> {
    let t = array_table("SCTP and TCP side by side", v, 40)?;
    let arr = v.as_array()?;
    let columns = arr
        .iter()
        .map(|r| {
            let transport = r["transport"].as_str().unwrap_or("?").to_uppercase();
            format!(
                "{transport} #{} sender {}",
                cell(&r["id"]),
                cell(&r["sender"])
            )
        })
        .collect();
    let skip = ["transport", "id", "sender"];
    let rows = t
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| !skip.contains(&c.as_str()))
        .map(|(j, c)| {
            let mut row = vec![c.clone()];
            row.extend(t.rows.iter().map(|r| r[j].clone()));
            row
        })
        .collect();
    Some(JsonTable {
        title: t.title,
        columns,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(round(41.19659999999997, 3), "41.197");
        assert_eq!(round(2.0, 3), "2");
        assert_eq!(exact(620.007), "620.007");
        assert_eq!(date(1796010576.148324), "2026-11-30 03:49:36 UTC");
        assert_eq!(date(0.0), "1970-01-01 00:00:00 UTC");
    }

    #[test]
    fn json_tables() {
        let v = serde_json::json!([{"a": 1, "b": "x"}, {"a": 2, "c": true}]);
        let t = array_table("t", &v, 10).unwrap();
        assert_eq!(t.columns, ["a", "b", "c"]);
        assert_eq!(t.rows[1], ["2", NONE, "yes"]);
        let tt = transpose(&t, Some("a"));
        assert_eq!(tt.columns, ["1", "2"]);
        assert_eq!(tt.rows[0], ["b", "x", NONE]);
    }
}
