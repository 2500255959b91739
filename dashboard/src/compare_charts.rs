//! Charts of the compare page: throughput and delivery gaps over time of every SCTP association
//! direction (from the stored tables) beside the TCP connections (from the analyzer's `tcp_*`
//! tables and the report's `tcp_flows`, when it has them).

use analyzer::report::CaptureReport;

use crate::charts::{bins, fmt_bin, report_events, AssocData};
use crate::series::{build, color, Chart, Pts, View};

/// (time, value, frame)
type Point = (f64, f64, Option<u64>);

/// Compare page charts over all associations (and TCP flows when the analyzer wrote them):
/// `throughput` (kbit/s per bin) and `gaps` (delivery gaps, ms, at the time of the delivery).
pub fn compare_chart(
    kind: &str,
    d: &AssocData,
    report: &CaptureReport,
    from: Option<f64>,
    to: Option<f64>,
    width: Option<u32>,
) -> Option<Chart> {
    let assocs = &report.associations;
    let full = [0.0, d.duration_s.max(1e-3)];
    let v = View::new(from, to, width, full);
    let dirs: Vec<(u32, u8)> = assocs
        .iter()
        .flat_map(|a| a.directions.iter().map(move |x| (a.id as u32, x.sender)))
        .collect();
    let label = |a: u32, s: u8| {
        let r = assocs.iter().find(|x| x.id as u32 == a);
        match r {
            Some(r) if r.endpoints.len() == 2 => format!(
                "SCTP #{a} :{}→:{}",
                r.endpoints[s as usize].port,
                r.endpoints[1 - s as usize].port
            ),
            _ => format!("SCTP #{a} sender {s}"),
        }
    };
    let mut tcp_names: Vec<String> = Vec::new();
    for n in d
        .tcp_bytes
        .iter()
        .map(|x| &x.0)
        .chain(d.tcp_rate.iter().map(|x| &x.0))
        .chain(d.tcp_deliveries.iter().map(|x| &x.0))
    {
        if !tcp_names.contains(n) {
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
            let mut series = Vec::new();
            for (k, &(a, s)) in dirs.iter().enumerate() {
                let mut sums = vec![0f64; n];
                for r in d.all_data.iter().filter(|r| r.0 == a && r.1 == s) {
                    if let Some(b) = bin(r.2) {
                        sums[b] += r.3 as f64;
                    }
                }
                let mut p = Pts::new(label(a, s), "step", color(k)).keep_all();
                for (b, x) in sums.iter().enumerate() {
                    p.push(v.from + b as f64 * bw, x * 8.0 / bw / 1000.0, None);
                }
                series.push(p);
            }
            for (k, name) in tcp_names.iter().enumerate() {
                let rate: Vec<&(String, f64, f64)> =
                    d.tcp_rate.iter().filter(|r| &r.0 == name).collect();
                if !rate.is_empty() {
                    let mut p = Pts::new(format!("{name} (1 s bins)"), "step", tcp_color(k));
                    for r in &rate {
                        p.push(r.1, r.2 * 8.0 / 1000.0, None);
                    }
                    if let Some(last) = rate.last() {
                        p.push(last.1 + 1.0, last.2 * 8.0 / 1000.0, None);
                    }
                    series.push(p);
                    continue;
                }
                let mut sums = vec![0f64; n];
                for r in d.tcp_bytes.iter().filter(|r| &r.0 == name) {
                    if let Some(b) = bin(r.1) {
                        sums[b] += r.2;
                    }
                }
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
            Some(c)
        }
        "gaps" => {
            let mut series = Vec::new();
            for (k, &(a, s)) in dirs.iter().enumerate() {
                let mut t: Vec<(f64, Option<u64>)> = d
                    .messages
                    .iter()
                    .filter(|m| m.assoc == a && m.sender == s)
                    .map(|m| (m.done_s, m.frame))
                    .collect();
                t.sort_by(|x, y| x.0.total_cmp(&y.0));
                let mut p = Pts::new(label(a, s), "points", color(k));
                for w in t.windows(2) {
                    p.push(w[1].0, (w[1].0 - w[0].0) * 1000.0, w[1].1);
                }
                series.push(p);
            }
            for (k, name) in tcp_names.iter().enumerate() {
                if !d.tcp_deliveries.iter().any(|r| &r.0 == name) {
                    continue;
                }
                let mut t: Vec<f64> = d
                    .tcp_deliveries
                    .iter()
                    .filter(|r| &r.0 == name)
                    .map(|r| r.1)
                    .collect();
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
            let mut c = build(
                "Delivery gaps over time (gap before each delivered message)",
                "time (s)",
                "gap (ms)",
                series,
                v,
                full,
            );
            c.events = assocs
                .iter()
                .flat_map(|a| a.directions.iter())
                .flat_map(|dir| report_events(Some(dir), false))
                .filter(|e| e.kind != "outage")
                .collect();
            if d.tcp_deliveries.is_empty() && !tcp.is_empty() {
                c.note = Some(
                    "TCP: outage recovery time (last ACK of new data before the outage → first \
                     after it) at the recovery, from the report"
                        .into(),
                );
            }
            Some(c)
        }
        _ => None,
    }
}

/// TCP outages from the report's `tcp_flows` (when the analyzer has them): per direction, the
/// recovery time (ms) at the moment of recovery, with its frame.
fn tcp_outages(report: &CaptureReport) -> Vec<(String, Vec<Point>)> {
    let v = crate::views::report_value(report);
    let mut out = Vec::new();
    for f in v["tcp_flows"].as_array().into_iter().flatten() {
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
