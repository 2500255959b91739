//! Scored test of the inference against the Linux kernel's own truth (`../shared/lab-linux`:
//! Linux 6.1 net/sctp in User-mode Linux; `*_truth.json` made by mktruth_lk.py). Same checks as
//! `tests/score_lab_linux.py` (see its header for each rule and tolerance), over the runs of
//! `../shared/captures/lab-linux/dev-list.txt` (skipped when ../shared is absent) and every
//! `sample-traces/lk_*` run. Prints the table (a null row is a figure the JSON does not claim, or
//! a field it does not have yet) and asserts every check except those in [`KNOWN_FAILURES`]; a
//! listed check that passes fails the test too, so that each fix removes its entry.

use crate::common;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Checks that fail today, and why (run, check name prefix, reason). Remove an entry with the fix.
const KNOWN_FAILURES: &[(&str, &str, &str)] = &[
    (
        "lk_failback_pf0",
        "receiver SACK delay",
        "median of 2 samples (98.4, 49.9 ms) for a 40 ms timer: the 98 ms one is a 60 ms guest \
         stall (the next DATA is captured 6 us after that SACK); the kernel's third delayed SACK \
         (53 ms, a 10-chunk packet with 2 duplicate TSNs) is excluded by the no-duplicate-report \
         rule",
    ),
    (
        "lk_failback_pf0",
        "PMR claimed",
        "no claim by design: the old path's probes came 1.18 s after the failover and 1.94 s after \
         that, inside a PF destination's windows (last RTO 740 ms: up to 370 + 740 ms, then 740 + \
         1480 ms, + 80 ms timer lateness), where an inactive destination's may come too \
         (chain::failover_policy)",
    ),
    (
        "lk_sparse_sack200_pf0",
        "PMR claimed",
        "no claim by design: the old path's one probe came 2.08 s after the failover, inside a PF \
         destination's window (last RTO 2.96 s), where an inactive destination's may come too \
         (chain::failover_policy)",
    ),
    (
        "lk_zerowin_rcvbuf",
        "timeouts = kernel T3 expiries",
        "the kernel's third expiry (10.201.2.2, PF event 3.211 s into the capture, both \
         destinations potentially failed) retransmitted 15 ms later, after gap reports of the \
         same TSNs: its retransmission reads as fast, 2 timeouts for 3 expiries",
    ),
];

/// Softirq + capture latency above the timer wheel's granule (ms).
const SLACK_MS: f64 = 5.0;
/// An observed RTO may read this much below the kernel's (jiffy edge, capture), ms.
const LOW_MS: f64 = 15.0;

/// How late a Linux 6.1 jiffy timer of `rto_ms` can fire: the timer wheel rounds an expiry up to
/// the granularity of its level (kernel/time/timer.c calc_index: level 0 below 63 jiffies, 1
/// jiffy; level 1 below 504, 8; level 2 below 4032, 64; then 512); never early.
fn lateness_ms(rto_ms: f64, hz: f64) -> f64 {
    let j = 1000.0 / hz;
    let rj = (rto_ms / j).round();
    let gran = if rj < 63.0 {
        1.0
    } else if rj < 504.0 {
        8.0
    } else if rj < 4032.0 {
        64.0
    } else {
        512.0
    };
    gran * j + SLACK_MS
}

#[derive(Clone, Copy, PartialEq)]
enum St {
    Ok,
    Fail,
    Null,
}

struct Check {
    run: String,
    name: String,
    truth: String,
    got: String,
    note: String,
    st: St,
}

#[derive(Default)]
struct Checks(Vec<Check>);

impl Checks {
    fn add(&mut self, run: &str, name: &str, truth: String, got: String, note: String, st: St) {
        self.0.push(Check {
            run: run.into(),
            name: name.into(),
            truth,
            got,
            note,
            st,
        });
    }
}

fn json(path: &Path) -> Option<Value> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// `PREFIX_<side>.pcap`, `.pcapng` or `.pcap.gz`.
fn capture(pre: &Path, side: &str) -> Option<PathBuf> {
    ["pcap", "pcapng", "pcap.gz"]
        .iter()
        .map(|ext| PathBuf::from(format!("{}_{side}.{ext}", pre.display())))
        .find(|p| p.exists())
}

fn truth_of(pre: &Path) -> Option<Value> {
    json(&PathBuf::from(format!("{}_truth.json", pre.display())))
}

/// The runs: dev-list of ../shared/captures/lab-linux, and sample-traces/lk_* with a truth file.
fn runs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(s) = common::shared_dir() {
        let dir = s.join("captures/lab-linux");
        if let Ok(list) = fs::read_to_string(dir.join("dev-list.txt")) {
            for l in list.lines().map(str::trim) {
                if !l.is_empty() && !l.starts_with('#') {
                    out.push(dir.join(l));
                }
            }
        }
    }
    let mut samples = BTreeSet::new();
    if let Ok(rd) = fs::read_dir(common::samples_dir()) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if let Some(pre) = n
                .strip_suffix("_truth.json")
                .filter(|p| p.starts_with("lk_"))
            {
                samples.insert(common::samples_dir().join(pre));
            }
        }
    }
    out.extend(samples);
    out.retain(|p| {
        capture(p, "sender").is_some() && capture(p, "receiver").is_some() && truth_of(p).is_some()
    });
    out
}

fn report(path: &Path) -> Value {
    let (_, r) = common::analyze(path);
    serde_json::to_value(&r).expect("report serialises")
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The association and direction whose DATA sender has one of `addrs`.
fn direction<'a>(cap: &'a Value, addrs: &[String]) -> Option<(&'a Value, &'a Value)> {
    for a in cap["associations"].as_array()? {
        for d in a["directions"].as_array().into_iter().flatten() {
            let s = d["sender"].as_u64()? as usize;
            if strs(&a["endpoints"][s]["addresses"])
                .iter()
                .any(|x| addrs.contains(x))
            {
                return Some((a, d));
            }
        }
    }
    None
}

/// A string field, or the name inside an object (`{"name": ...}`); None when null or absent.
fn name_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) => ["name", "stack", "value", "id"]
            .iter()
            .find_map(|k| m.get(*k).and_then(Value::as_str).map(String::from)),
        _ => None,
    }
}

/// (epoch, IPv4 source, IPv4 destination) of each frame of a classic pcap (Ethernet, SLL, SLL2,
/// raw). Empty for anything else.
fn pcap_ipv4(path: &Path) -> Vec<(f64, [u8; 4], [u8; 4])> {
    let Ok(b) = fs::read(path) else {
        return Vec::new();
    };
    if b.len() < 24 {
        return Vec::new();
    }
    let magic = u32::from_le_bytes(b[0..4].try_into().unwrap());
    let le = matches!(magic, 0xa1b2_c3d4 | 0xa1b2_3c4d);
    let nano = matches!(magic, 0xa1b2_3c4d | 0x4d3c_b2a1);
    if !le && !matches!(magic, 0xd4c3_b2a1 | 0x4d3c_b2a1) {
        return Vec::new();
    }
    let u32at = |i: usize| {
        let a: [u8; 4] = b[i..i + 4].try_into().unwrap();
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let lt = u32at(20);
    let off = match lt {
        1 => 14,
        113 => 16,
        276 => 20,
        101 | 228 => 0,
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut i = 24;
    while i + 16 <= b.len() {
        let (s, frac, incl) = (u32at(i), u32at(i + 4), u32at(i + 8) as usize);
        let d = &b[(i + 16).min(b.len())..(i + 16 + incl).min(b.len())];
        i += 16 + incl;
        if lt == 1 && d.get(12..14) != Some(&[8u8, 0][..]) {
            continue;
        }
        let Some(ip) = d.get(off..) else { continue };
        if ip.len() < 20 || ip[0] >> 4 != 4 {
            continue;
        }
        let t = s as f64 + frac as f64 / if nano { 1e9 } else { 1e6 };
        out.push((
            t,
            ip[12..16].try_into().unwrap(),
            ip[16..20].try_into().unwrap(),
        ));
    }
    out
}

fn v4(s: &str) -> [u8; 4] {
    s.parse::<std::net::Ipv4Addr>()
        .map(|a| a.octets())
        .unwrap_or([0; 4])
}

/// Seconds after the logged cut at which path 1 delivered its last frame (never negative), and
/// how it is known: `wire_check` (both directions, the later), or, when that lies past the
/// recovery (it looks until the end of the run), the last path-1 frame either endpoint received
/// before the recovery.
fn effective_cut(pre: &Path, truth: &Value) -> (f64, &'static str) {
    let cut = truth["fail_epoch"].as_f64().unwrap_or(0.0);
    let lim = truth["recover_epoch"]
        .as_f64()
        .map_or(f64::INFINITY, |r| r - cut);
    let wc: Vec<f64> = truth["wire_check"]
        .as_object()
        .map(|m| m.values().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    if !wc.is_empty() && wc.iter().all(|&v| v < lim) {
        return (wc.iter().copied().fold(0.0, f64::max), "wire_check");
    }
    let c1 = v4(truth["topology"]["client"][0].as_str().unwrap_or(""));
    let s1 = v4(truth["topology"]["server"][0].as_str().unwrap_or(""));
    let mut last: Option<f64> = None;
    for (side, src, dst) in [("sender", s1, c1), ("receiver", c1, s1)] {
        let Some(p) = capture(pre, side) else {
            continue;
        };
        for (t, a, b) in pcap_ipv4(&p) {
            if a == src && b == dst && t >= cut - 5.0 && t < cut + lim {
                last = Some(last.map_or(t, |l: f64| l.max(t)));
            }
        }
    }
    match last {
        Some(l) => (
            (l - cut).max(0.0),
            "last path-1 frame received before the recovery",
        ),
        None => (0.0, "logged instant"),
    }
}

/// The kernel's RTO of `addr` last polled at or before `epoch` (ms).
fn kernel_rto_at(path_changes: &Value, addr: &str, epoch: f64) -> Option<f64> {
    path_changes
        .as_array()?
        .iter()
        .filter(|p| p["addr"].as_str() == Some(addr) && p["epoch"].as_f64() <= Some(epoch))
        .filter_map(|p| p["rto_ms"].as_f64())
        .next_back()
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or("null".into(), |x| format!("{x:.1}"))
}

fn score_run(c: &mut Checks, pre: &Path) {
    let run = pre.file_name().unwrap().to_string_lossy().to_string();
    let truth = truth_of(pre).unwrap();
    let client = &truth["stack_log"]["client"];
    let server = &truth["stack_log"]["server"];
    let copt = &client["sockopt_assoc"];
    let sopt = &server["sockopt_assoc"];
    let csys = &truth["sysctl_client"];
    let hz = truth["kernel"]["CONFIG_HZ"].as_f64().unwrap_or(100.0);
    // PF as Linux can reach it: a path turns potentially failed only while pf_retrans < its
    // error count < pathmaxrxt (sm_sideeffect.c sctp_do_8_2_transport_strike); with pathmaxrxt
    // <= pf_retrans + 1 (PMR 1, pf_retrans 0) the RFC 9260 8.2 rule moves the data.
    let pf_reachable = copt["pathmaxrxt"]
        .as_u64()
        .is_none_or(|pmr| csys["pf_retrans"].as_u64().unwrap_or(0) + 1 < pmr);
    let pf_on = csys["pf_enable"].as_i64().unwrap_or(1) == 1 && pf_reachable;
    let interval = truth["configured"]["interval_ms"].as_f64().unwrap_or(0.0);
    let client_addrs = strs(&truth["topology"]["client"]);
    let snd = report(&capture(pre, "sender").unwrap());
    let rcv = report(&capture(pre, "receiver").unwrap());
    let Some((_, d)) = direction(&snd, &client_addrs) else {
        c.add(
            &run,
            "DATA direction",
            "present".into(),
            "missing".into(),
            String::new(),
            St::Fail,
        );
        return;
    };
    let cap0 = snd["start_epoch_s"].as_f64();
    let fos: Vec<&Value> = d["failovers"].as_array().into_iter().flatten().collect();
    let is_spur = |f: &&Value| f["spurious"].as_bool() == Some(true);
    let spur: Vec<&Value> = fos.iter().copied().filter(is_spur).collect();
    let cut = truth["fail_epoch"].as_f64();
    let events: String = client["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["event"].as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let declared =
        events.contains("ADDR_UNREACHABLE") || events.contains("ADDR_POTENTIALLY_FAILED");
    let fo_new =
        truth["measured_sender"]["first_new_data_on_path2_after_cut"]["rel_cut_s"].as_f64();

    if cut.is_some() {
        if let Some(fo_new) = fo_new {
            let want_t = truth["fail_rel_sender_capture_s"].as_f64().unwrap_or(0.0) + fo_new;
            let (eff, how) = effective_cut(pre, &truth);
            let want_ms = (fo_new - eff) * 1000.0;
            let tol = interval.max(25.0);
            match fos.iter().find(|f| !is_spur(f)) {
                None => {
                    c.add(
                        &run,
                        "failover event time",
                        format!("{want_t:.4}"),
                        "none".into(),
                        String::new(),
                        St::Fail,
                    );
                    c.add(
                        &run,
                        "failover time",
                        format!("{want_ms:.0}±{tol:.0}"),
                        "none".into(),
                        String::new(),
                        St::Fail,
                    );
                }
                Some(f) => {
                    let t = f["t_s"].as_f64().unwrap_or(f64::NAN);
                    let e = (t - want_t) * 1000.0;
                    c.add(
                        &run,
                        "failover event time",
                        format!("{want_t:.4}±0.005"),
                        format!("{t:.4}"),
                        format!("{e:+.1} ms"),
                        if e.abs() <= 5.0 { St::Ok } else { St::Fail },
                    );
                    // null: the analyzer says the trace cannot tell when the outage began.
                    let fm = f["failover_ms"].as_f64();
                    let ok = fm.is_some_and(|x| (x - want_ms).abs() <= tol);
                    c.add(
                        &run,
                        "failover time",
                        format!("{want_ms:.0}±{tol:.0}"),
                        fmt_opt(fm),
                        format!("cut effective +{:.1} ms ({how})", eff * 1000.0),
                        match fm {
                            None => St::Null,
                            Some(_) if ok => St::Ok,
                            Some(_) => St::Fail,
                        },
                    );
                }
            }
        }
        c.add(
            &run,
            "no false spurious",
            "0".into(),
            spur.len().to_string(),
            String::new(),
            if spur.is_empty() { St::Ok } else { St::Fail },
        );
    } else if declared {
        let prim = truth["topology"]["primary_path"]
            .as_str()
            .and_then(|p| p.split("->").last())
            .unwrap_or("")
            .trim()
            .to_string();
        let first_t3 = client["t3_expiries"][0]["epoch"].as_f64();
        // The RTO the first expired timer ran with: the last poll before the expiry doubled it.
        let krto = first_t3.and_then(|e| kernel_rto_at(&client["path_changes"], &prim, e - 0.003));
        let sackd = sopt["sackdelay"].as_f64();
        c.add(
            &run,
            "spurious flagged",
            "yes".into(),
            spur.len().to_string(),
            format!("kernel declared {prim} failed with no cut"),
            if spur.is_empty() { St::Fail } else { St::Ok },
        );
        if let (Some(k), Some(s)) = (krto, sackd) {
            if s > k {
                let want = "sack_delay_exceeds_rto";
                let got = spur.first().and_then(|f| f["cause"].as_str()).unwrap_or("");
                c.add(
                    &run,
                    "spurious cause",
                    want.into(),
                    got.into(),
                    format!("peer SACK delay {s} > kernel RTO {k}"),
                    if got == want { St::Ok } else { St::Fail },
                );
            }
        }
    } else {
        c.add(
            &run,
            "no spurious (control)",
            "0".into(),
            spur.len().to_string(),
            String::new(),
            if spur.is_empty() { St::Ok } else { St::Fail },
        );
    }

    // Timeouts against the kernel's T3-rtx expiries, and each observed RTO against its RTO.
    let k_exp: Vec<(f64, u64)> = client["t3_expiries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| Some((x["epoch"].as_f64()?, x["delta"].as_u64()?)))
        .collect();
    let k_t3: u64 = k_exp.iter().map(|x| x.1).sum();
    let tos: Vec<&Value> = d["timeouts"].as_array().into_iter().flatten().collect();
    c.add(
        &run,
        "timeouts = kernel T3 expiries",
        k_t3.to_string(),
        tos.len().to_string(),
        String::new(),
        if tos.len() as u64 == k_t3 {
            St::Ok
        } else {
            St::Fail
        },
    );
    for to in &tos {
        let t = to["t_s"].as_f64().unwrap_or(f64::NAN);
        let label = format!(
            "observed RTO at {t:.3}s ({}, backoff {})",
            to["timer_start"].as_str().unwrap_or("?"),
            to["backoff"]
        );
        let (Some(obs), Some(cap0)) = (to["observed_rto_ms"].as_f64(), cap0) else {
            c.add(
                &run,
                &label,
                "kernel RTO".into(),
                "null".into(),
                "no claim".into(),
                St::Null,
            );
            continue;
        };
        let ep = cap0 + t;
        let path = to["path"].as_str().unwrap_or("");
        let near = k_exp
            .iter()
            .map(|x| (x.0 - ep) * 1000.0)
            .fold(f64::INFINITY, |a, b| if b.abs() < a.abs() { b } else { a });
        let Some(k) = kernel_rto_at(&client["path_changes"], path, ep - obs / 1000.0 + 0.005)
        else {
            c.add(
                &run,
                &label,
                "no kernel RTO".into(),
                format!("{obs:.1}"),
                String::new(),
                St::Null,
            );
            continue;
        };
        let hi = lateness_ms(k, hz);
        let ok = obs >= k - LOW_MS && obs <= k + hi;
        c.add(
            &run,
            &label,
            format!("[{:.0}, {:.0}]", k - LOW_MS, k + hi),
            format!("{obs:.1}"),
            format!("kernel {k:.0}, T3 {near:+.0} ms"),
            if ok { St::Ok } else { St::Fail },
        );
    }

    // Path.Max.Retrans, RTO.min, pf_retrans, failover_policy: null or right.
    let want_pmr = copt["pathmaxrxt"].as_u64();
    let pmr = d["path_max_retrans"].as_u64();
    c.add(
        &run,
        "PMR (null = no claim)",
        format!("{want_pmr:?}"),
        format!("{pmr:?}"),
        String::new(),
        match pmr {
            None => St::Null,
            Some(p) if Some(p) == want_pmr => St::Ok,
            _ => St::Fail,
        },
    );
    if cut.is_some() && !pf_on {
        c.add(
            &run,
            "PMR claimed (PF off, path cut)",
            format!("{want_pmr:?}"),
            format!("{pmr:?}"),
            String::new(),
            if pmr.is_some() { St::Ok } else { St::Fail },
        );
    }
    let want_min = copt["rto_min"].as_f64().unwrap_or(f64::NAN);
    let hi = lateness_ms(want_min, hz);
    let rmin = d["rto_min_ms"].as_f64();
    c.add(
        &run,
        "RTO.min (null = no claim)",
        format!(
            "{want_min:.0} [{:.0}, {:.0}]",
            want_min - LOW_MS,
            want_min + hi
        ),
        fmt_opt(rmin),
        String::new(),
        match rmin {
            None => St::Null,
            Some(r) if r >= want_min - LOW_MS && r <= want_min + hi => St::Ok,
            _ => St::Fail,
        },
    );
    let want_pfr = pf_on.then(|| csys["pf_retrans"].as_u64().unwrap_or(0));
    match d.get("pf_retrans") {
        None => c.add(
            &run,
            "pf_retrans",
            format!("{want_pfr:?}"),
            "null".into(),
            "field not in the JSON yet".into(),
            St::Null,
        ),
        Some(v) if v.is_null() => c.add(
            &run,
            "pf_retrans",
            format!("{want_pfr:?}"),
            "null".into(),
            "no claim".into(),
            St::Null,
        ),
        Some(v) => c.add(
            &run,
            "pf_retrans",
            format!("{want_pfr:?}"),
            v.to_string(),
            String::new(),
            if v.as_u64() == want_pfr && want_pfr.is_some() {
                St::Ok
            } else {
                St::Fail
            },
        ),
    }
    let want_pol = if pf_on { "pf" } else { "rfc" };
    match d.get("failover_policy") {
        None => c.add(
            &run,
            "failover_policy",
            want_pol.into(),
            "null".into(),
            "field not in the JSON yet".into(),
            St::Null,
        ),
        Some(v) => match name_of(v) {
            None => c.add(
                &run,
                "failover_policy",
                want_pol.into(),
                "null".into(),
                "no claim".into(),
                St::Null,
            ),
            Some(p) => c.add(
                &run,
                "failover_policy",
                want_pol.into(),
                p.clone(),
                String::new(),
                if p == want_pol { St::Ok } else { St::Fail },
            ),
        },
    }

    // SACK delay of the receiver where its delayed-SACK timer fired at least 3 times.
    let n_ds: u64 = server["delayed_sack_expiries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x["delta"].as_u64())
        .sum();
    if n_ds >= 3 {
        let want = sopt["sackdelay"].as_f64().unwrap_or(f64::NAN);
        let sd = direction(&rcv, &client_addrs).map(|(_, dr)| &dr["sack_delay_ms"]);
        let med = sd.and_then(|s| s["median"].as_f64());
        let n = sd.and_then(|s| s["n"].as_u64()).unwrap_or(0);
        c.add(
            &run,
            "receiver SACK delay",
            format!("{want:.0}±10"),
            fmt_opt(med),
            format!("n {n}, kernel expiries {n_ds}"),
            if med.is_some_and(|m| (m - want).abs() <= 10.0) {
                St::Ok
            } else {
                St::Fail
            },
        );
    }

    // Heartbeat interval of the client's paths (RFC 9260 8.3): null, or within 10% of the
    // kernel's hb_interval.
    let want_hb = copt["hbinterval"]
        .as_f64()
        .or_else(|| csys["hb_interval"].as_f64());
    for (cap, side) in [(&snd, "sender"), (&rcv, "receiver")] {
        let Some((a, _)) = direction(cap, &client_addrs) else {
            continue;
        };
        for p in a["paths"].as_array().into_iter().flatten() {
            if !client_addrs.contains(&p["src"].as_str().unwrap_or("").to_string()) {
                continue;
            }
            let (Some(want), Some(got)) = (want_hb, p["hb_interval_ms"].as_f64()) else {
                continue;
            };
            c.add(
                &run,
                &format!(
                    "heartbeat interval {} ({side})",
                    p["dst"].as_str().unwrap_or("")
                ),
                format!("{want:.0}±10%"),
                format!("{got:.0}"),
                format!("periods n {}", p["hb_period_ms"]["n"]),
                if (got - want).abs() <= 0.1 * want {
                    St::Ok
                } else {
                    St::Fail
                },
            );
        }
    }

    // The endpoint stack, where the JSON has the field.
    for (cap, side) in [(&snd, "sender"), (&rcv, "receiver")] {
        let Some((a, _)) = direction(cap, &client_addrs) else {
            continue;
        };
        for ep in a["endpoints"].as_array().into_iter().flatten() {
            let who = if strs(&ep["addresses"])
                .iter()
                .any(|x| client_addrs.contains(x))
            {
                "client"
            } else {
                "server"
            };
            let label = format!("stack of the {who} ({side} capture)");
            match ep.get("stack") {
                None => c.add(
                    &run,
                    &label,
                    "linux".into(),
                    "null".into(),
                    "not reported (no `stack` field yet)".into(),
                    St::Null,
                ),
                Some(v) => {
                    let got = name_of(v);
                    c.add(
                        &run,
                        &label,
                        "linux".into(),
                        got.clone().unwrap_or("null".into()),
                        String::new(),
                        if got.as_deref() == Some("linux") {
                            St::Ok
                        } else {
                            St::Fail
                        },
                    );
                }
            }
        }
    }
}

#[test]
fn lab_linux_truth_scored() {
    let runs = runs();
    if runs.is_empty() {
        eprintln!("no Linux lab run (../shared absent, no sample-traces/lk_*): skipped");
        return;
    }
    let mut c = Checks::default();
    for pre in &runs {
        score_run(&mut c, pre);
    }
    let known = |ch: &Check| {
        KNOWN_FAILURES
            .iter()
            .any(|(r, n, _)| ch.run == *r && ch.name.starts_with(n))
    };
    println!(
        "{:<38} {:<40} {:>22} {:>12}  {:<6} note",
        "run", "check", "truth", "inferred", "status"
    );
    for ch in &c.0 {
        let st = match (ch.st, known(ch)) {
            (St::Ok, _) => "ok",
            (St::Null, _) => "null",
            (St::Fail, true) => "FAIL (known)",
            (St::Fail, false) => "FAIL",
        };
        println!(
            "{:<38} {:<40} {:>22} {:>12}  {:<6} {}",
            ch.run, ch.name, ch.truth, ch.got, st, ch.note
        );
    }
    let count = |s: St| c.0.iter().filter(|x| x.st == s).count();
    println!(
        "Linux lab: {} ok, {} FAIL ({} known), {} null (no claim) of {} checks",
        count(St::Ok),
        count(St::Fail),
        c.0.iter().filter(|x| x.st == St::Fail && known(x)).count(),
        count(St::Null),
        c.0.len()
    );
    let unexpected: Vec<String> =
        c.0.iter()
            .filter(|x| x.st == St::Fail && !known(x))
            .map(|x| format!("{} {}: truth {} got {}", x.run, x.name, x.truth, x.got))
            .collect();
    // A listed failure whose run was scored but which no longer fails: the fix should remove it.
    let scored: BTreeSet<&str> = c.0.iter().map(|x| x.run.as_str()).collect();
    let stale: Vec<String> = KNOWN_FAILURES
        .iter()
        .filter(|(r, n, _)| {
            scored.contains(r)
                && !c
                    .0
                    .iter()
                    .any(|x| x.run == *r && x.name.starts_with(n) && x.st == St::Fail)
        })
        .map(|(r, n, _)| format!("{r} {n}: passes now, remove it from KNOWN_FAILURES"))
        .collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "{unexpected:#?}\n{stale:#?}"
    );
}
