//! A capture's parameters for a study: from its sidecar files (`NAME_truth.json`,
//! `NAME.meta.json`: every top-level number, text or flag, nested objects as `a.b`), from a
//! `study.toml` in its folder (`pattern`: a regular expression whose named groups read
//! parameters from the file name, e.g. `sack(?P<sack_delay_ms>\d+)`), else inferred per
//! direction from the analysis (`inferred`, rounded so that runs made alike group together).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The sidecar parameters of capture `path`, and the files they came from.
pub fn sidecar(path: &Path) -> Result<(BTreeMap<String, Value>, Vec<PathBuf>), String> {
    let mut out = BTreeMap::new();
    let mut from = Vec::new();
    let dir = path.parent().unwrap_or(Path::new("."));
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    // study.toml of the folder: parameters from the file name.
    let toml_path = dir.join("study.toml");
    if toml_path.is_file() {
        let text = std::fs::read_to_string(&toml_path)
            .map_err(|e| format!("{}: {e}", toml_path.display()))?;
        let t: toml::Table = text
            .parse()
            .map_err(|e| format!("{}: {e}", toml_path.display()))?;
        if let Some(p) = t.get("pattern").and_then(|p| p.as_str()) {
            let re = regex::Regex::new(p)
                .map_err(|e| format!("{}: pattern: {e}", toml_path.display()))?;
            if let Some(c) = re.captures(&file) {
                for name in re.capture_names().flatten() {
                    if let Some(m) = c.name(name) {
                        out.insert(name.to_string(), scalar(m.as_str()));
                    }
                }
            }
            from.push(toml_path);
        }
    }
    // The lab's NAME_{sender,receiver}.pcap share NAME_truth.json; NAME.pcap has NAME.meta.json.
    let stem = strip_capture_ext(&file);
    let run = stem
        .strip_suffix("_sender")
        .or_else(|| stem.strip_suffix("_receiver"))
        .unwrap_or(stem);
    for side in [format!("{run}_truth.json"), format!("{stem}.meta.json")] {
        let p = dir.join(&side);
        if !p.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        if let Value::Object(m) = v {
            flatten("", &m, &mut out);
        }
        from.push(p);
    }
    Ok((out, from))
}

fn strip_capture_ext(f: &str) -> &str {
    let f = crate::inputs::strip_compressed_ext(f);
    for ext in [".pcapng", ".pcap", ".cap"] {
        if let Some(s) = f.strip_suffix(ext) {
            return s;
        }
    }
    f
}

/// Numbers written as text ("2" in a truth file) read as numbers.
fn scalar(s: &str) -> Value {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() => serde_json::Number::from_f64(f)
            .map(|n| {
                if f.fract() == 0.0 && f.abs() < 1e15 {
                    Value::from(f as i64)
                } else {
                    Value::Number(n)
                }
            })
            .unwrap_or_else(|| Value::String(s.to_string())),
        _ => Value::String(s.to_string()),
    }
}

fn flatten(prefix: &str, m: &serde_json::Map<String, Value>, out: &mut BTreeMap<String, Value>) {
    for (k, v) in m {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Object(inner) => flatten(&key, inner, out),
            Value::String(s) => {
                out.insert(key, scalar(s));
            }
            Value::Number(_) | Value::Bool(_) => {
                out.insert(key, v.clone());
            }
            // Lists and nulls are not parameters.
            _ => {}
        }
    }
}

/// Parameters inferred from a direction's figures, where no sidecar gives them: `sack_delay_ms`
/// (median SACK delay, to 10 ms), `rto_min_ms` (the claimed RTO.min), `message_interval_ms`
/// (to 5 ms), `path_delay_ms` (half the base RTT, to 5 ms), `loss_pct` (retransmitted share of
/// the DATA chunks, to 0.1 %).
pub fn inferred(d: &crate::report_infer::DirectionReport) -> BTreeMap<String, Value> {
    let round = |v: f64, step: f64| (v / step).round() * step;
    let num = |v: f64| scalar(&format!("{}", (v * 1e6).round() / 1e6));
    let mut out = BTreeMap::new();
    if let Some(s) = d.sack_delay_ms {
        out.insert("sack_delay_ms".into(), num(round(s.median, 10.0)));
    }
    if let Some(r) = d.rto_min_ms {
        out.insert("rto_min_ms".into(), num(r));
    }
    if let Some(m) = d.message_interval_ms {
        out.insert("message_interval_ms".into(), num(round(m, 5.0)));
    }
    if let Some(b) = d.base_rtt_ms {
        out.insert("path_delay_ms".into(), num(round(b / 2.0, 5.0)));
    }
    if d.data_chunks > 0 {
        let share = d.retransmissions.total as f64 / d.data_chunks as f64 * 100.0;
        out.insert("loss_pct".into(), num(round(share, 0.1)));
    }
    out
}
