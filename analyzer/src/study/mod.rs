//! Studies (issue 17): one row of figures per direction of every SCTP association and TCP
//! connection of many captures, each labelled with its capture's parameters (`params`), and
//! the figures aggregated per group of parameter values: n, mean, median, min, max and a 95%
//! confidence interval (Student's t). The CLI's `study` command and the `study` DataFrame are
//! built from `Study`.

pub mod cache;
pub mod params;
mod templates;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use templates::{template, TEMPLATES};

use crate::report::CaptureReport;

/// A study's definition: parameters grouping the rows, the x parameter, the metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StudySpec {
    /// Template name, when made from one.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub by: Vec<String>,
    #[serde(default)]
    pub x: Option<String>,
    /// Metrics (`METRICS`); empty: every metric.
    #[serde(default)]
    pub y: Vec<String>,
    /// What the template reproduces (shown with its output).
    #[serde(default)]
    pub about: Option<String>,
}

/// One direction of a capture: its parameters and figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub capture: String,
    pub transport: &'static str,
    pub params: BTreeMap<String, Value>,
    pub metrics: BTreeMap<&'static str, f64>,
}

/// One aggregated figure of one group (the JSON row of `--format json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyRow {
    /// The `by` parameters' values.
    pub group: BTreeMap<String, Value>,
    /// The x parameter's value (null without `x`, or when the capture does not have it).
    pub x: Value,
    pub metric: String,
    pub transport: String,
    pub n: u64,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// mean +- t(0.975, n - 1) s / sqrt(n); null below two samples.
    pub ci95: Option<[f64; 2]>,
    pub captures: Vec<String>,
}

/// The study output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyReport {
    pub study: Option<String>,
    pub by: Vec<String>,
    pub x: Option<String>,
    pub rows: Vec<StudyRow>,
}

/// The metrics of a direction, by name, with their meaning (README "Studies").
pub const METRICS: &[(&str, &str)] = &[
    (
        "failover_ms",
        "SCTP failover time (first real failover), ms",
    ),
    (
        "outage_ms",
        "failover time (SCTP) or outage recovery time (TCP), ms",
    ),
    (
        "rto_at_failure_ms",
        "SCTP observed RTO of the first expiry of the failover's chain, ms",
    ),
    ("spurious_failovers", "SCTP failovers flagged spurious"),
    ("sacks_per_data_packet", "SCTP SACKs per DATA packet"),
    (
        "retransmission_rate",
        "retransmitted / all DATA chunks (TCP: data segments)",
    ),
    (
        "retransmissions",
        "retransmitted DATA chunks (TCP: segments)",
    ),
    ("timeouts", "retransmission timeouts"),
    (
        "throughput_bps",
        "payload bits per second, retransmissions included",
    ),
    ("goodput_bps", "payload bits per second, each byte once"),
    ("rtt_median_ms", "median data RTT, sender vantage, ms"),
    (
        "latency_p95_ms",
        "p95 message transfer time (send to acknowledgement), ms",
    ),
    ("max_transfer_ms", "longest message transfer time, ms"),
    (
        "max_gap_ms",
        "longest gap between new data (max inter-arrival), ms",
    ),
    ("deadline_missed", "messages later than --deadline"),
    (
        "ack_delay_ms",
        "median SACK delay (TCP: delayed-ACK delay), ms",
    ),
    ("handshake_ms", "handshake time, ms"),
    ("shutdown_ms", "SCTP SHUTDOWN -> SHUTDOWN-COMPLETE, ms"),
    (
        "hol_blocked_messages",
        "SCTP messages that waited for an earlier one of their stream",
    ),
    ("hol_delay_sum_ms", "SCTP sum of those waits, ms"),
    (
        "single_stream_hol_delay_sum_ms",
        "SCTP waits with every message on one stream, ms",
    ),
];

/// The directions of one analysed capture as samples, with the capture's parameters (`params`
/// from its sidecar files, else inferred per direction: `params::inferred`).
pub fn samples(r: &CaptureReport, params: &BTreeMap<String, Value>) -> Vec<Sample> {
    let mut out = Vec::new();
    // The comparison rows name their association / connection by id: looked up once each (a
    // capture may hold thousands).
    let mut assocs = std::collections::HashMap::new();
    for a in &r.associations {
        assocs.entry(a.id).or_insert(a);
    }
    let mut flows = std::collections::HashMap::new();
    for f in &r.tcp_flows {
        flows.entry(f.id).or_insert(f);
    }
    for row in &r.comparison {
        let mut m: BTreeMap<&'static str, f64> = BTreeMap::new();
        let mut put = |k: &'static str, v: Option<f64>| {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                m.insert(k, v);
            }
        };
        put("outage_ms", row.outage_ms);
        put("retransmission_rate", row.retransmission_rate);
        put("retransmissions", Some(row.retransmissions as f64));
        put("timeouts", Some(row.timeouts as f64));
        put("throughput_bps", Some(row.throughput_bps));
        put("goodput_bps", Some(row.goodput_bps));
        put("rtt_median_ms", row.rtt_median_ms);
        put("max_transfer_ms", row.max_transfer_ms);
        put("max_gap_ms", row.max_gap_ms);
        put("ack_delay_ms", row.ack_delay_ms);
        put("handshake_ms", row.handshake_ms);
        put(
            "hol_blocked_messages",
            row.hol_blocked_messages.map(|n| n as f64),
        );
        put("hol_delay_sum_ms", row.hol_delay_sum_ms);
        put(
            "single_stream_hol_delay_sum_ms",
            row.single_stream_delay_sum_ms,
        );
        let mut inferred = BTreeMap::new();
        if row.transport == "sctp" {
            let a = assocs.get(&row.id).copied();
            let d = a.and_then(|a| a.directions.iter().find(|d| d.sender == row.sender));
            if let (Some(a), Some(d)) = (a, d) {
                let fo = d.failovers.iter().find(|f| !f.spurious);
                put("failover_ms", fo.and_then(|f| f.failover_ms));
                put("rto_at_failure_ms", rto_at_failure(d));
                put(
                    "spurious_failovers",
                    Some(d.failovers.iter().filter(|f| f.spurious).count() as f64),
                );
                put("sacks_per_data_packet", d.sacks_per_data_packet);
                put("latency_p95_ms", d.p95_transfer_ms);
                put("deadline_missed", d.deadline_missed.map(|n| n as f64));
                put("shutdown_ms", a.shutdown_ms);
                inferred = params::inferred(d);
                // What a real capture's directions are grouped by: the upper layer and the
                // sending endpoint's stack, when known.
                if let Some(u) = &a.stream_summary.upper_layer.name {
                    inferred.insert("upper_layer".into(), Value::from(u.as_str()));
                }
                let stack = a.endpoints.get(usize::from(d.sender));
                if let Some(n) = stack.and_then(|e| e.stack.name.as_deref()) {
                    inferred.insert("stack".into(), Value::from(n));
                }
            }
        } else if let Some(f) = flows.get(&row.id) {
            if let Some(d) = f.directions.iter().find(|d| d.sender == row.sender) {
                put("latency_p95_ms", d.p95_transfer_ms);
            }
        }
        let mut p = inferred;
        p.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        out.push(Sample {
            capture: r.file.clone(),
            transport: if row.transport == "sctp" {
                "sctp"
            } else {
                "tcp"
            },
            params: p,
            metrics: m,
        });
    }
    out
}

/// The samples of the capture at `path`: its sidecar parameters over those inferred from its
/// analysis, read back from the store `cache` (`cache::load`) when it holds them, stored there
/// otherwise. What the CLI's `study` and the dashboard's Studies page both run per capture.
pub fn capture_samples(
    path: &std::path::Path,
    opts: &crate::analyze::Options,
    cache: Option<&std::path::Path>,
) -> Result<Vec<Sample>, String> {
    let (params, _) = params::sidecar(path)?;
    // The options that change figures key the store.
    let key = format!(
        "deadline {:?} udp {:?}",
        opts.deadline_ms, opts.sctp_udp_ports
    );
    if let Some(s) = cache.and_then(|dir| cache::load(dir, path, &key)) {
        return Ok(cache::with_params(s, &params));
    }
    let c = crate::analyze::analyze_file(path, opts, &mut |_| {}).map_err(|e| e.to_string())?;
    let own = samples(&CaptureReport::from_analysis(&c), &BTreeMap::new());
    if let Some(dir) = cache {
        cache::store(dir, path, &key, &own)?;
    }
    Ok(cache::with_params(own, &params))
}

/// The observed RTO of the first expiry in the chain of the direction's first real failover
/// (the RTO in force when the path failed), ms; null when that expiry's RTO was not observed
/// or it was not the chain's first (backoff above 0): a later, doubled one would read high.
fn rto_at_failure(d: &crate::report_infer::DirectionReport) -> Option<f64> {
    let f = d.failovers.iter().find(|f| !f.spurious)?;
    let start = f.outage_start_s?;
    let first = d
        .timeouts
        .iter()
        .find(|t| t.t_s >= start && t.t_s <= f.t_s)?;
    (first.backoff == 0).then_some(first.observed_rto_ms)?
}

/// Aggregates `samples` for `spec`: one row per group (values of `by`), x value, metric and
/// transport, in that order.
pub fn aggregate(spec: &StudySpec, samples: &[Sample]) -> StudyReport {
    type Key = (Vec<Value>, Value, &'static str, &'static str);
    let wanted: Vec<&'static str> = if spec.y.is_empty() {
        METRICS.iter().map(|m| m.0).collect()
    } else {
        METRICS
            .iter()
            .map(|m| m.0)
            .filter(|m| spec.y.iter().any(|y| y == m))
            .collect()
    };
    let mut groups: BTreeMap<String, (Key, Vec<f64>, Vec<String>)> = BTreeMap::new();
    for s in samples {
        let group: Vec<Value> = spec
            .by
            .iter()
            .map(|b| s.params.get(b).cloned().unwrap_or(Value::Null))
            .collect();
        let x = spec
            .x
            .as_ref()
            .and_then(|x| s.params.get(x).cloned())
            .unwrap_or(Value::Null);
        for &m in &wanted {
            let Some(&v) = s.metrics.get(m) else {
                continue;
            };
            // Ordered by group, then x (numbers by value), metric, transport.
            let sort = format!(
                "{}\u{1}{}\u{1}{:04}\u{1}{}",
                group.iter().map(sort_key).collect::<Vec<_>>().join("\u{2}"),
                sort_key(&x),
                wanted.iter().position(|w| *w == m).unwrap_or(0),
                s.transport
            );
            let e = groups
                .entry(sort)
                .or_insert_with(|| ((group.clone(), x.clone(), m, s.transport), vec![], vec![]));
            e.1.push(v);
            if !e.2.contains(&s.capture) {
                e.2.push(s.capture.clone());
            }
        }
    }
    let rows = groups
        .into_values()
        .map(|((group, x, metric, transport), values, captures)| {
            let st = Stats::of(&values);
            StudyRow {
                group: spec.by.iter().cloned().zip(group).collect(),
                x,
                metric: metric.to_string(),
                transport: transport.to_string(),
                n: values.len() as u64,
                mean: st.mean,
                median: st.median,
                min: st.min,
                max: st.max,
                ci95: st.ci95,
                captures,
            }
        })
        .collect();
    StudyReport {
        study: spec.name.clone(),
        by: spec.by.clone(),
        x: spec.x.clone(),
        rows,
    }
}

/// A sortable text for a parameter value: numbers by value (fixed width), then text.
fn sort_key(v: &Value) -> String {
    match v {
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            // Order-preserving for finite doubles of either sign.
            let bits = f.to_bits();
            let key = if f >= 0.0 { bits | (1 << 63) } else { !bits };
            format!("0{key:016x}")
        }
        Value::Null => "2".to_string(),
        other => format!("1{other}"),
    }
}

/// Summary statistics of one group's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub ci95: Option<[f64; 2]>,
}

impl Stats {
    /// Of at least one value.
    pub fn of(values: &[f64]) -> Stats {
        let n = values.len();
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let mean = v.iter().sum::<f64>() / n as f64;
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let ci95 = (n >= 2).then(|| {
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let half = t975(n - 1) * (var / n as f64).sqrt();
            [mean - half, mean + half]
        });
        Stats {
            mean,
            median,
            min: v[0],
            max: v[n - 1],
            ci95,
        }
    }
}

/// Student's t, 97.5th percentile, for `df` degrees of freedom (two-sided 95%); the normal
/// quantile past 30.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.960)
}

/// The rows as a text table.
pub fn render_text(r: &StudyReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if let Some(n) = &r.study {
        let _ = writeln!(s, "study {n}");
    }
    let num = |v: f64| {
        if v.abs() >= 1e5 {
            format!("{v:.0}")
        } else {
            format!("{v:.3}")
        }
    };
    let _ = writeln!(
        s,
        "{:<40} {:>10} {:<30} {:<5} {:>4} {:>12} {:>12} {:>12} {:>12} {:>27}",
        "group", "x", "metric", "proto", "n", "mean", "median", "min", "max", "ci95"
    );
    for row in &r.rows {
        let g = row
            .group
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let _ = writeln!(
            s,
            "{:<40} {:>10} {:<30} {:<5} {:>4} {:>12} {:>12} {:>12} {:>12} {:>27}",
            if g.is_empty() { "-".to_string() } else { g },
            if row.x.is_null() {
                "-".to_string()
            } else {
                row.x.to_string()
            },
            row.metric,
            row.transport,
            row.n,
            num(row.mean),
            num(row.median),
            num(row.min),
            num(row.max),
            row.ci95.map_or("-".to_string(), |[a, b]| format!(
                "[{}, {}]",
                num(a),
                num(b)
            ))
        );
    }
    s
}

/// The rows as CSV (group and x as JSON values).
pub fn render_csv(r: &StudyReport) -> String {
    let mut s =
        String::from("group,x,metric,transport,n,mean,median,min,max,ci95_lo,ci95_hi,captures\n");
    let q = |t: &str| format!("\"{}\"", t.replace('"', "\"\""));
    for row in &r.rows {
        let g = serde_json::to_string(&row.group).unwrap_or_default();
        let (lo, hi) = row.ci95.map_or((String::new(), String::new()), |[a, b]| {
            (a.to_string(), b.to_string())
        });
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n",
            q(&g),
            q(&row.x.to_string()),
            row.metric,
            row.transport,
            row.n,
            row.mean,
            row.median,
            row.min,
            row.max,
            lo,
            hi,
            q(&row.captures.join(" "))
        ));
    }
    s
}
