//! The charts of an association (TSN, RTT/RTO, SACK delay, throughput, failover timeline with the
//! lifecycle events) and of the compare page, built from the stored tables (rows loaded by
//! `tables`) and the stored report.

use std::collections::HashSet;

use analyzer::report::AssocReport;
use analyzer::report_infer::DirectionReport;

use crate::series::{build, color, Band, Chart, Event, Pts, View};

/// DATA / I-DATA chunk.
pub struct DataRow {
    pub t: f64,
    pub frame: u64,
    pub sender: u8,
    /// Index into `AssocData::addrs` of the destination.
    pub dst: u16,
    pub tsn: u32,
    pub bytes: u32,
}

/// SACK / NR-SACK chunk.
pub struct SackRow {
    pub t: f64,
    pub frame: u64,
    pub sender: u8,
    pub cum: u32,
    pub gaps: u32,
    pub dups: u32,
}

/// HEARTBEAT chunk.
pub struct HbRow {
    pub t: f64,
    pub frame: u64,
    pub sender: u8,
    pub dst: u16,
}

pub struct RttRow {
    pub t: f64,
    pub sender: u8,
    pub path: u16,
    pub heartbeat: bool,
    pub rtt_ms: f64,
    pub est_rto_ms: Option<f64>,
    pub frame: Option<u64>,
}

pub struct DelayRow {
    pub sender: u8,
    pub path: u16,
    pub ms: f64,
}

pub struct RtxRow {
    pub t: f64,
    pub frame: u64,
    pub sender: u8,
    pub tsn: u32,
    pub path: u16,
    pub kind: String,
    pub spurious: bool,
}

pub struct MsgRow {
    pub assoc: u32,
    pub sender: u8,
    pub done_s: f64,
    pub frame: Option<u64>,
}

/// The rows of one association (or of all, for the compare page), from the stored tables.
#[derive(Default)]
pub struct AssocData {
    /// Interned addresses: rows refer to them by index.
    pub addrs: Vec<String>,
    pub data: Vec<DataRow>,
    pub sacks: Vec<SackRow>,
    pub hbs: Vec<HbRow>,
    pub rtt: Vec<RttRow>,
    pub delays: Vec<DelayRow>,
    pub rtx: Vec<RtxRow>,
    /// (assoc, sender, t, bytes) of every DATA chunk: the compare page only.
    pub all_data: Vec<(u32, u8, f64, u32)>,
    pub messages: Vec<MsgRow>,
    /// TCP flows (compare page), when the analyzer wrote TCP tables: (flow label, t, bytes).
    pub tcp_bytes: Vec<(String, f64, f64)>,
    /// TCP bytes per second as binned by the analyzer: (flow label, second start, bytes).
    pub tcp_rate: Vec<(String, f64, f64)>,
    /// TCP deliveries (flow label, t).
    pub tcp_deliveries: Vec<(String, f64)>,
    pub duration_s: f64,
}

impl AssocData {
    pub fn intern(&mut self, a: &str) -> u16 {
        match self.addrs.iter().position(|x| x == a) {
            Some(i) => i as u16,
            None => {
                self.addrs.push(a.to_string());
                (self.addrs.len() - 1) as u16
            }
        }
    }

    fn addr(&self, i: u16) -> &str {
        self.addrs.get(i as usize).map_or("?", |s| s.as_str())
    }
}

/// Chart names served under `/charts/{kind}`.
pub const KINDS: [&str; 5] = ["tsn", "rtt", "sack_delay", "throughput", "timeline"];

/// Paths of a direction in the order of first use (then any path only named by events).
fn lanes(d: &AssocData, sender: u8, dir: Option<&DirectionReport>) -> Vec<u16> {
    let mut out: Vec<u16> = Vec::new();
    for r in d.data.iter().filter(|r| r.sender == sender) {
        if !out.contains(&r.dst) {
            out.push(r.dst);
        }
    }
    if let Some(dir) = dir {
        for f in &dir.failovers {
            for a in [&f.from, &f.to] {
                if let Some(i) = d.addrs.iter().position(|x| x == a) {
                    if !out.contains(&(i as u16)) {
                        out.push(i as u16);
                    }
                }
            }
        }
    }
    out
}

fn lane_of(lanes: &[u16], d: &AssocData, addr: &str) -> Option<usize> {
    lanes.iter().position(|&l| d.addr(l) == addr)
}

/// Failovers, failbacks and timeouts of a direction as chart markers (from the report).
pub(crate) fn report_events(dir: Option<&DirectionReport>, with_timeouts: bool) -> Vec<Event> {
    let mut ev = Vec::new();
    let Some(dir) = dir else { return ev };
    for f in &dir.failovers {
        if let Some(o) = f.outage_start_s {
            ev.push(Event {
                t: o,
                kind: "outage",
                label: format!("outage start on {}", f.from),
                frame: f.outage_frame,
                short: None,
            });
        }
        let ms = f
            .failover_ms
            .map_or(String::new(), |m| format!(" after {m} ms"));
        ev.push(Event {
            t: f.t_s,
            kind: if f.spurious {
                "spurious_failover"
            } else {
                "failover"
            },
            label: format!(
                "{}failover {} → {}{ms}",
                if f.spurious { "spurious " } else { "" },
                f.from,
                f.to
            ),
            frame: Some(f.frame),
            short: None,
        });
    }
    for b in &dir.failbacks {
        ev.push(Event {
            t: b.t_s,
            kind: "failback",
            label: format!("failback to {}", b.to),
            frame: Some(b.frame),
            short: None,
        });
    }
    if with_timeouts {
        for t in &dir.timeouts {
            ev.push(Event {
                t: t.t_s,
                kind: "timeout",
                label: format!("T3-rtx timeout on {} (backoff {})", t.path, t.backoff),
                frame: Some(t.frame),
                short: None,
            });
        }
    }
    ev
}

/// The direction to chart: the requested sender, else the first that sent DATA.
pub fn pick_sender(a: &AssocReport, sender: Option<u8>) -> u8 {
    sender
        .filter(|s| *s < 2)
        .or_else(|| a.directions.first().map(|d| d.sender))
        .unwrap_or(0)
}

/// One chart of association `a` for DATA sender `sender`.
pub fn assoc_chart(
    kind: &str,
    d: &AssocData,
    a: &AssocReport,
    sender: u8,
    from: Option<f64>,
    to: Option<f64>,
    width: Option<u32>,
) -> Option<Chart> {
    let dir = a.directions.iter().find(|x| x.sender == sender);
    let full = [a.first_s, a.last_s.max(a.first_s + 1e-3)];
    match kind {
        "tsn" => Some(tsn(d, dir, sender, View::new(from, to, width, full), full)),
        "rtt" => Some(rtt(d, dir, sender, View::new(from, to, width, full), full)),
        "sack_delay" => Some(sack_delay(d, dir, sender, from, to, width)),
        "throughput" => Some(throughput(
            d,
            sender,
            View::new(from, to, width, full),
            full,
        )),
        "timeline" => {
            let mut c = timeline(d, dir, sender, View::new(from, to, width, full), full);
            // How the association started and ended, whichever direction is shown.
            c.events.extend(crate::lifecycle::chart_events(a));
            Some(c)
        }
        _ => None,
    }
}

fn tsn(d: &AssocData, dir: Option<&DirectionReport>, s: u8, v: View, full: [f64; 2]) -> Chart {
    // Relative to the direction's first DATA, else to the first cumulative ack its peer sent
    // (a direction whose DATA the capture missed): never absolute values under a relative title.
    let first_data = d.data.iter().find(|r| r.sender == s).map(|r| r.tsn);
    let first_cum = d.sacks.iter().find(|r| r.sender != s).map(|r| r.cum);
    let base = first_data.or(first_cum).unwrap_or(0);
    let rel = |t: u32| t.wrapping_sub(base) as i32 as f64;
    let rtx: HashSet<(u64, u32)> = d
        .rtx
        .iter()
        .filter(|r| r.sender == s)
        .map(|r| (r.frame, r.tsn))
        .collect();
    let lanes = lanes(d, s, dir);
    let mut per_path: Vec<Pts> = lanes
        .iter()
        .enumerate()
        .map(|(i, &l)| Pts::new(format!("DATA → {}", d.addr(l)), "points", color(i)))
        .collect();
    for r in d.data.iter().filter(|r| r.sender == s) {
        if rtx.contains(&(r.frame, r.tsn)) {
            continue;
        }
        if let Some(i) = lanes.iter().position(|&l| l == r.dst) {
            per_path[i].push(r.t, rel(r.tsn), Some(r.frame));
        }
    }
    let mut fast = Pts::new("fast retransmission", "points", "#ff7f0e").keep_all();
    let mut timeout = Pts::new("timeout retransmission", "points", "#d62728").keep_all();
    let mut spurious = Pts::new("spurious retransmission", "points", "#e377c2").keep_all();
    for r in d.rtx.iter().filter(|r| r.sender == s) {
        let target = if r.spurious {
            &mut spurious
        } else if r.kind == "fast" {
            &mut fast
        } else {
            &mut timeout
        };
        target.push(r.t, rel(r.tsn), Some(r.frame));
    }
    let mut cum = Pts::new("SACK cumulative TSN ack", "step", "#444444");
    let mut gaps = Pts::new("SACK gap report (first missing TSN)", "points", "#bcbd22").keep_all();
    let mut dups = Pts::new("SACK duplicate TSN report", "points", "#17becf").keep_all();
    for r in d.sacks.iter().filter(|r| r.sender != s) {
        cum.push(r.t, rel(r.cum), Some(r.frame));
        if r.gaps > 0 {
            gaps.push(r.t, rel(r.cum) + 1.0, Some(r.frame));
        }
        if r.dups > 0 {
            dups.push(r.t, rel(r.cum), Some(r.frame));
        }
    }
    let mut series = per_path;
    series.extend([fast, timeout, spurious, cum, gaps, dups]);
    let mut c = build(
        format!("TSN over time (DATA sender {s})"),
        "time (s)",
        "TSN (relative)",
        series,
        v,
        full,
    );
    c.events = report_events(dir, false);
    // Stalls (issue 15), shaded over the whole height from start to end (or the data's end).
    c.bands = dir
        .iter()
        .flat_map(|d| &d.stalls)
        .map(|st| Band {
            from: st.t_s,
            to: st.end_s.unwrap_or(full[1]).max(st.t_s),
            lane: 0,
            kind: "stall",
            label: format!(
                "stall: {} ({})",
                crate::help::words("stall_cause", &st.cause),
                st.evidence
            ),
            full_height: true,
        })
        .collect();
    c.note = match (first_data, first_cum) {
        (Some(b), _) => Some(format!("TSN relative to {b} (the first DATA's)")),
        (None, Some(b)) => Some(format!(
            "no DATA of this direction captured; TSN relative to {b} (the first cumulative ack)"
        )),
        (None, None) => Some("no DATA and no SACK in this direction".into()),
    };
    c
}

fn rtt(d: &AssocData, dir: Option<&DirectionReport>, s: u8, v: View, full: [f64; 2]) -> Chart {
    let lanes = lanes(d, s, dir);
    let mut series = Vec::new();
    let rows: Vec<&RttRow> = d.rtt.iter().filter(|r| r.sender == s).collect();
    let mut paths: Vec<u16> = lanes.clone();
    for r in &rows {
        if !paths.contains(&r.path) {
            paths.push(r.path);
        }
    }
    for (i, &p) in paths.iter().enumerate() {
        let mut data = Pts::new(format!("data RTT {}", d.addr(p)), "points", color(i));
        let mut hb = Pts::new(
            format!("heartbeat RTT {}", d.addr(p)),
            "points",
            color(i + 4),
        );
        // SRTT + 4 RTTVAR as the stack's estimator gives it, and the RFC 9260 6.3.1 RTO: that
        // floored at the inferred RTO.min (capped at RTO.max).
        let mut raw = Pts::new(format!("SRTT + 4 RTTVAR {}", d.addr(p)), "step", color(i));
        let floor = dir.and_then(|x| x.rto_min_ms);
        let cap = dir.and_then(|x| x.rto_max_ms).unwrap_or(f64::INFINITY);
        let mut rto = Pts::new(
            format!(
                "RFC RTO (RTO.min {} ms) {}",
                floor.map_or("?".into(), |f| crate::views::round(f, 1)),
                d.addr(p)
            ),
            "step",
            color(i + 2),
        );
        for r in rows.iter().filter(|r| r.path == p) {
            if r.heartbeat {
                hb.push(r.t, r.rtt_ms, r.frame);
            } else {
                data.push(r.t, r.rtt_ms, r.frame);
                if let Some(e) = r.est_rto_ms {
                    raw.push(r.t, e, r.frame);
                    if let Some(f) = floor {
                        rto.push(r.t, e.max(f).min(cap), r.frame);
                    }
                }
            }
        }
        series.extend(
            [data, hb, raw, rto]
                .into_iter()
                .filter(|x| !x.pts.is_empty()),
        );
    }
    let mut observed = Pts::new("observed RTO (timeout)", "points", "#d62728").keep_all();
    if let Some(dir) = dir {
        for t in &dir.timeouts {
            if let Some(o) = t.observed_rto_ms {
                observed.push(t.t_s, o, Some(t.frame));
            }
        }
    }
    series.push(observed);
    let mut c = build(
        format!("RTT and RTO over time (DATA sender {s})"),
        "time (s)",
        "ms",
        series,
        v,
        full,
    );
    c.events = report_events(dir, false);
    c
}

fn sack_delay(
    d: &AssocData,
    dir: Option<&DirectionReport>,
    s: u8,
    from: Option<f64>,
    to: Option<f64>,
    width: Option<u32>,
) -> Chart {
    let rows: Vec<&DelayRow> = d.delays.iter().filter(|r| r.sender == s).collect();
    let max = rows.iter().map(|r| r.ms).fold(0.0f64, f64::max);
    let lo_all = rows.iter().map(|r| r.ms).fold(0.0f64, f64::min);
    let full = [lo_all, (max * 1.05).max(lo_all + 1.0)];
    let v = View::new(from, to, width, full);
    let nbins = 60usize;
    let bw = (v.to - v.from) / nbins as f64;
    let mut paths: Vec<u16> = Vec::new();
    for r in &rows {
        if !paths.contains(&r.path) {
            paths.push(r.path);
        }
    }
    let mut series = Vec::new();
    let mut counts_all = vec![0u32; nbins];
    let mut per_path = vec![vec![0u32; nbins]; paths.len()];
    for r in &rows {
        if r.ms < v.from || r.ms > v.to {
            continue;
        }
        let b = (((r.ms - v.from) / bw) as usize).min(nbins - 1);
        counts_all[b] += 1;
        if let Some(i) = paths.iter().position(|&p| p == r.path) {
            per_path[i][b] += 1;
        }
    }
    let center = |b: usize| v.from + (b as f64 + 0.5) * bw;
    let mut all = Pts::new("SACK delay samples (all paths)", "bars", "#1f77b4").keep_all();
    for (b, &n) in counts_all.iter().enumerate() {
        all.push(center(b), n as f64, None);
    }
    series.push(all);
    if paths.len() > 1 {
        for (i, p) in paths.iter().enumerate() {
            let mut pp =
                Pts::new(format!("samples on {}", d.addr(*p)), "step", color(i + 1)).keep_all();
            for (b, &n) in per_path[i].iter().enumerate() {
                pp.push(center(b), n as f64, None);
            }
            series.push(pp);
        }
    }
    let mut c = build(
        format!(
            "SACK delay histogram (DATA sender {s}, {} samples)",
            rows.len()
        ),
        "SACK delay (ms)",
        "samples",
        series,
        v,
        full,
    );
    c.time_axis = false;
    if let Some(dist) = dir.and_then(|x| x.sack_delay_ms) {
        c.events.push(Event {
            t: dist.median,
            kind: "median",
            label: format!(
                "inferred SACK delay (median) {} ms",
                crate::views::round(dist.median, 3)
            ),
            frame: None,
            short: None,
        });
    }
    if rows.is_empty() {
        c.note = Some("no SACK delay samples in this direction (see the vantage point)".into());
    }
    c
}

/// Bins for per-time-bin sums over the view.
pub(crate) fn bins(v: &View) -> (usize, f64) {
    let n = ((v.width / 6) as usize).clamp(10, 400);
    (n, (v.to - v.from) / n as f64)
}

fn throughput(d: &AssocData, s: u8, v: View, full: [f64; 2]) -> Chart {
    let lanes = lanes(d, s, None);
    let (n, bw) = bins(&v);
    let mut sums = vec![vec![0f64; n]; lanes.len()];
    for r in d.data.iter().filter(|r| r.sender == s) {
        if r.t < v.from || r.t >= v.to {
            continue;
        }
        let b = (((r.t - v.from) / bw) as usize).min(n - 1);
        if let Some(i) = lanes.iter().position(|&l| l == r.dst) {
            sums[i][b] += r.bytes as f64;
        }
    }
    let mut series = Vec::new();
    for (i, &l) in lanes.iter().enumerate() {
        let mut p = Pts::new(format!("DATA → {}", d.addr(l)), "step", color(i)).keep_all();
        for (b, &bytes) in sums[i].iter().enumerate() {
            p.push(v.from + b as f64 * bw, bytes * 8.0 / bw / 1000.0, None);
        }
        series.push(p);
    }
    let mut c = build(
        format!("Throughput per path (DATA sender {s}, bin {})", fmt_bin(bw)),
        "time (s)",
        "kbit/s",
        series,
        v,
        full,
    );
    c.decimated = false;
    c
}

pub fn fmt_bin(bw: f64) -> String {
    if bw >= 1.0 {
        format!("{bw:.2} s")
    } else {
        format!("{:.1} ms", bw * 1000.0)
    }
}

fn timeline(d: &AssocData, dir: Option<&DirectionReport>, s: u8, v: View, full: [f64; 2]) -> Chart {
    let lanes = lanes(d, s, dir);
    let rtx: HashSet<(u64, u32)> = d
        .rtx
        .iter()
        .filter(|r| r.sender == s)
        .map(|r| (r.frame, r.tsn))
        .collect();
    let mut series: Vec<Pts> = lanes
        .iter()
        .enumerate()
        .map(|(i, &l)| Pts::new(format!("new DATA → {}", d.addr(l)), "points", color(i)))
        .collect();
    let mut rt = Pts::new("retransmission", "points", "#ff7f0e").keep_all();
    let mut hb = Pts::new("HEARTBEAT", "points", "#17becf").keep_all();
    let mut to = Pts::new("T3-rtx timeout", "points", "#d62728").keep_all();
    for r in d.data.iter().filter(|r| r.sender == s) {
        let Some(i) = lanes.iter().position(|&l| l == r.dst) else {
            continue;
        };
        if rtx.contains(&(r.frame, r.tsn)) {
            rt.push(r.t, i as f64 + 0.2, Some(r.frame));
        } else {
            series[i].push(r.t, i as f64, Some(r.frame));
        }
    }
    for r in d.hbs.iter().filter(|r| r.sender == s) {
        if let Some(i) = lanes.iter().position(|&l| l == r.dst) {
            hb.push(r.t, i as f64 - 0.2, Some(r.frame));
        }
    }
    let mut bands = Vec::new();
    if let Some(dir) = dir {
        for t in &dir.timeouts {
            if let Some(i) = lane_of(&lanes, d, &t.path) {
                to.push(t.t_s, i as f64 - 0.3, Some(t.frame));
            }
        }
        bands = path_states(d, &lanes, dir, s, full);
    }
    series.extend([rt, hb, to]);
    let mut c = build(
        format!("Failover timeline (DATA sender {s})"),
        "time (s)",
        "path",
        series,
        v,
        full,
    );
    c.events = report_events(dir, false);
    c.bands = bands;
    c.lanes = lanes.iter().map(|&l| d.addr(l).to_string()).collect();
    c
}

/// Path states over time from the report: the path carrying new DATA is `active`; between the
/// outage start and the failover the old path is in `outage`.
fn path_states(
    d: &AssocData,
    lanes: &[u16],
    dir: &DirectionReport,
    s: u8,
    full: [f64; 2],
) -> Vec<Band> {
    let first = d.data.iter().find(|r| r.sender == s);
    let Some(first) = first else {
        return Vec::new();
    };
    // (time of the switch, end of the old path's active time, new path)
    let mut switches: Vec<(f64, f64, String)> = dir
        .failovers
        .iter()
        .map(|f| {
            (
                f.t_s,
                f.outage_start_s.unwrap_or(f.t_s).min(f.t_s),
                f.to.clone(),
            )
        })
        .chain(dir.failbacks.iter().map(|b| (b.t_s, b.t_s, b.to.clone())))
        .collect();
    switches.sort_by(|a, b| a.0.total_cmp(&b.0));
    let last = d
        .data
        .iter()
        .rev()
        .find(|r| r.sender == s)
        .map_or(full[1], |r| r.t);
    let mut out = Vec::new();
    let mut cur = (first.t, d.addr(first.dst).to_string());
    for (t, end, to) in switches {
        if let Some(lane) = lane_of(lanes, d, &cur.1) {
            out.push(Band {
                from: cur.0,
                to: end.max(cur.0),
                lane,
                kind: "active",
                label: format!("{} active", cur.1),
                full_height: false,
            });
        }
        cur = (t, to);
    }
    if let Some(lane) = lane_of(lanes, d, &cur.1) {
        out.push(Band {
            from: cur.0,
            to: last,
            lane,
            kind: "active",
            label: format!("{} active", cur.1),
            full_height: false,
        });
    }
    for f in &dir.failovers {
        if let (Some(o), Some(lane)) = (f.outage_start_s, lane_of(lanes, d, &f.from)) {
            out.push(Band {
                from: o,
                to: f.t_s,
                lane,
                kind: if f.spurious { "spurious" } else { "outage" },
                label: format!(
                    "{} {} → failover after {} ms",
                    if f.spurious {
                        "suspected outage (spurious)"
                    } else {
                        "outage"
                    },
                    f.from,
                    f.failover_ms
                        .map_or("?".into(), |m| crate::views::round(m, 3))
                ),
                full_height: false,
            });
        }
    }
    out
}
