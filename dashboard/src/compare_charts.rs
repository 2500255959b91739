//! Charts of the compare page: throughput and delivery gaps over time of every SCTP association
//! direction (from the stored tables) beside the TCP connections (from the analyzer's `tcp_*`
//! tables and the report's `tcp_flows`, when it has them).

use std::collections::HashMap;

use analyzer::report::{AssocReport, CaptureReport};

use crate::series::Event;

use crate::charts::{bins, fmt_bin, report_events, AssocData};
use crate::series::{build, color, Chart, Pts, View};

/// Most SCTP association directions with a series of their own (a capture with more shows those
/// that sent the most DATA bytes).
const MAX_DIRS: usize = 12;

/// (time, value, frame)
type Point = (f64, f64, Option<u64>);

/// Compare page charts over all associations (and TCP flows when the analyzer wrote them):
/// `throughput` (kbit/s per bin) and `gaps` (delivery gaps, ms, at the time of the delivery).
/// What the compare charts need of one association direction (`compare_dirs`).
#[derive(Debug, Clone)]
pub struct CompareDir {
    pub assoc: u32,
    pub sender: u8,
    /// DATA bytes it sent, over its paths.
    pub bytes: u64,
    /// Its series label ("SCTP #3 :5000→:5001").
    pub label: String,
    /// Its failovers and failbacks as markers (`report_events` without timeouts).
    pub events: Vec<Event>,
}

/// The directions of association `a` for the compare charts.
pub fn compare_dirs(a: &AssocReport) -> Vec<CompareDir> {
    a.directions
        .iter()
        .map(|x| {
            let s = x.sender;
            CompareDir {
                assoc: a.id as u32,
                sender: s,
                bytes: a
                    .paths
                    .iter()
                    .filter(|p| p.sender == s)
                    .map(|p| p.data_bytes)
                    .sum(),
                label: if a.endpoints.len() == 2 {
                    format!(
                        "SCTP #{} :{}→:{}",
                        a.id,
                        a.endpoints[s as usize].port,
                        a.endpoints[1 - s as usize].port
                    )
                } else {
                    format!("SCTP #{} sender {s}", a.id)
                },
                events: report_events(Some(x), false),
            }
        })
        .collect()
}

/// `dirs`: every association direction of the capture (`compare_dirs`, in id order); `report`
/// the capture's report head (its TCP flows).
pub fn compare_chart(
    kind: &str,
    d: &AssocData,
    cdirs: &[CompareDir],
    report: &CaptureReport,
    from: Option<f64>,
    to: Option<f64>,
    width: Option<u32>,
) -> Option<Chart> {
    let full = [0.0, d.duration_s.max(1e-3)];
    let v = View::new(from, to, width, full);
    let by_id: HashMap<(u32, u8), &CompareDir> =
        cdirs.iter().map(|x| ((x.assoc, x.sender), x)).collect();
    let all_dirs: Vec<(u32, u8)> = cdirs.iter().map(|x| (x.assoc, x.sender)).collect();
    // A capture with thousands of associations: the directions that sent the most DATA bytes
    // get a series each, the others one aggregate (throughput) or none (gaps).
    let limited = all_dirs.len() > MAX_DIRS;
    let dirs: Vec<(u32, u8)> = if limited {
        let bytes = |k: &(u32, u8)| -> u64 { by_id.get(k).map_or(0, |x| x.bytes) };
        let mut ranked: Vec<((u32, u8), u64)> = all_dirs.iter().map(|x| (*x, bytes(x))).collect();
        ranked.sort_by_key(|x| std::cmp::Reverse(x.1));
        ranked.into_iter().take(MAX_DIRS).map(|x| x.0).collect()
    } else {
        all_dirs.clone()
    };
    let others = all_dirs.len() - dirs.len();
    let slot: HashMap<(u32, u8), usize> = dirs.iter().enumerate().map(|(k, x)| (*x, k)).collect();
    let limit_note = limited.then(|| {
        format!(
            "{} SCTP association directions: the {} that carried the most DATA bytes are shown{}",
            all_dirs.len(),
            dirs.len(),
            if kind == "throughput" {
                format!(", the other {others} as one summed series")
            } else {
                format!(" ({others} others not shown)")
            }
        )
    });
    let label = |a: u32, s: u8| {
        by_id
            .get(&(a, s))
            .map_or_else(|| format!("SCTP #{a} sender {s}"), |x| x.label.clone())
    };
    let mut tcp_names: Vec<String> = Vec::new();
    let mut tcp_index: HashMap<&str, usize> = HashMap::new();
    for n in d
        .tcp_bytes
        .iter()
        .map(|x| &x.0)
        .chain(d.tcp_rate.iter().map(|x| &x.0))
        .chain(d.tcp_deliveries.iter().map(|x| &x.0))
    {
        if !tcp_index.contains_key(n.as_str()) {
            tcp_index.insert(n.as_str(), tcp_names.len());
            tcp_names.push(n.clone());
        }
    }
    let tcp_color = |i: usize| color(i + dirs.len() + 2);
    match kind {
        "throughput" => {
            let (n, bw) = bins(&v);
            let bin = |t: f64| {
                (t >= v.from && t < v.to).then(|| (((t - v.from) / bw) as usize).min(n - 1))
            };
            let mut sums = vec![vec![0f64; n]; dirs.len()];
            let mut other = vec![0f64; n];
            for r in &d.all_data {
                if let Some(b) = bin(r.2) {
                    match slot.get(&(r.0, r.1)) {
                        Some(&k) => sums[k][b] += r.3 as f64,
                        None => other[b] += r.3 as f64,
                    }
                }
            }
            let mut series = Vec::new();
            for (k, &(a, s)) in dirs.iter().enumerate() {
                let mut p = Pts::new(label(a, s), "step", color(k)).keep_all();
                for (b, x) in sums[k].iter().enumerate() {
                    p.push(v.from + b as f64 * bw, x * 8.0 / bw / 1000.0, None);
                }
                series.push(p);
            }
            if others > 0 {
                let mut p = Pts::new(
                    format!("other {others} SCTP directions (sum)"),
                    "step",
                    color(dirs.len()),
                )
                .keep_all();
                for (b, x) in other.iter().enumerate() {
                    p.push(v.from + b as f64 * bw, x * 8.0 / bw / 1000.0, None);
                }
                series.push(p);
            }
            let mut rates: Vec<Vec<&(String, f64, f64)>> = vec![Vec::new(); tcp_names.len()];
            for r in &d.tcp_rate {
                rates[tcp_index[r.0.as_str()]].push(r);
            }
            let mut tcp_sums: Vec<Option<Vec<f64>>> = vec![None; tcp_names.len()];
            for r in &d.tcp_bytes {
                let k = tcp_index[r.0.as_str()];
                if rates[k].is_empty() {
                    let sums = tcp_sums[k].get_or_insert_with(|| vec![0f64; n]);
                    if let Some(b) = bin(r.1) {
                        sums[b] += r.2;
                    }
                }
            }
            for (k, name) in tcp_names.iter().enumerate() {
                let rate = &rates[k];
                if !rate.is_empty() {
                    let mut p = Pts::new(format!("{name} (1 s bins)"), "step", tcp_color(k));
                    for r in rate {
                        p.push(r.1, r.2 * 8.0 / 1000.0, None);
                    }
                    if let Some(last) = rate.last() {
                        p.push(last.1 + 1.0, last.2 * 8.0 / 1000.0, None);
                    }
                    series.push(p);
                    continue;
                }
                let sums = tcp_sums[k].take().unwrap_or_else(|| vec![0f64; n]);
                let mut p = Pts::new(name.clone(), "step", tcp_color(k)).keep_all();
                for (b, x) in sums.iter().enumerate() {
                    p.push(v.from + b as f64 * bw, x * 8.0 / bw / 1000.0, None);
                }
                series.push(p);
            }
            let mut c = build(
                format!("Throughput over time (bin {})", fmt_bin(bw)),
                "time (s)",
                "kbit/s",
                series,
                v,
                full,
            );
            c.decimated = false;
            c.note = limit_note;
            Some(c)
        }
        "gaps" => {
            let mut times: Vec<Vec<(f64, Option<u64>)>> = vec![Vec::new(); dirs.len()];
            for m in &d.messages {
                if let Some(&k) = slot.get(&(m.assoc, m.sender)) {
                    times[k].push((m.done_s, m.frame));
                }
            }
            let mut series = Vec::new();
            for (k, (&(a, s), mut t)) in dirs.iter().zip(times).enumerate() {
                t.sort_by(|x, y| x.0.total_cmp(&y.0));
                let mut p = Pts::new(label(a, s), "points", color(k));
                for w in t.windows(2) {
                    p.push(w[1].0, (w[1].0 - w[0].0) * 1000.0, w[1].1);
                }
                series.push(p);
            }
            let mut deliveries: Vec<Vec<f64>> = vec![Vec::new(); tcp_names.len()];
            for r in &d.tcp_deliveries {
                deliveries[tcp_index[r.0.as_str()]].push(r.1);
            }
            for (k, (name, mut t)) in tcp_names.iter().zip(deliveries).enumerate() {
                if t.is_empty() {
                    continue;
                }
                t.sort_by(f64::total_cmp);
                let mut p = Pts::new(name.clone(), "points", tcp_color(k));
                for w in t.windows(2) {
                    p.push(w[1], (w[1] - w[0]) * 1000.0, None);
                }
                series.push(p);
            }
            let tcp = tcp_outages(report);
            for (k, (label, pts)) in tcp.iter().enumerate() {
                let mut p =
                    Pts::new(label.clone(), "points", tcp_color(k + tcp_names.len())).keep_all();
                for &(t, ms, frame) in pts {
                    p.push(t, ms, frame);
                }
                series.push(p);
            }
            // Every series shares one x axis (uPlot's layout: a null where a series has no
            // point), so n series of 2 points per pixel each would send n x 2n points per
            // pixel: each series gets its share of the width instead.
            let n = series.iter().filter(|p| !p.pts.is_empty()).count().max(1) as u32;
            let per_series = View {
                width: (v.width / n).max(50),
                ..v
            };
            let mut c = build(
                "Delivery gaps over time (gap before each delivered message)",
                "time (s)",
                "gap (ms)",
                series,
                per_series,
                full,
            );
            c.events = cdirs
                .iter()
                .filter(|x| !limited || slot.contains_key(&(x.assoc, x.sender)))
                .flat_map(|x| x.events.iter().cloned())
                .filter(|e| e.kind != "outage")
                .collect();
            let mut notes: Vec<String> = limit_note.into_iter().collect();
            if d.tcp_deliveries.is_empty() && !tcp.is_empty() {
                notes.push(
                    "TCP: outage recovery time (last ACK of new data before the outage → first \
                     after it) at the recovery, from the report"
                        .into(),
                );
            }
            if !notes.is_empty() {
                c.note = Some(notes.join("; "));
            }
            Some(c)
        }
        _ => None,
    }
}

/// TCP outages from the report's `tcp_flows` (when the analyzer has them): per direction, the
/// recovery time (ms) at the moment of recovery, with its frame.
fn tcp_outages(report: &CaptureReport) -> Vec<(String, Vec<Point>)> {
    let v = crate::views::tcp_flows_value(report);
    let mut out = Vec::new();
    for f in v.as_array().into_iter().flatten() {
        for d in f["directions"].as_array().into_iter().flatten() {
            let pts: Vec<Point> = d["outages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| {
                    Some((
                        o["recovered_s"].as_f64()?,
                        o["recovery_ms"].as_f64()?,
                        o["frame"].as_u64(),
                    ))
                })
                .collect();
            if !pts.is_empty() {
                out.push((
                    format!(
                        "TCP #{} sender {} outage recovery",
                        crate::views::cell(&f["id"]),
                        crate::views::cell(&d["sender"])
                    ),
                    pts,
                ));
            }
        }
    }
    out
}
