//! Human-readable terminal report (`--format table`), rendered from the JSON contract types so
//! that the terminal and the JSON never disagree.

use std::fmt::Write;

use crate::report::{AssocReport, CaptureReport};

/// Lifecycle events shown per association on a terminal.
const TEXT_EVENTS: usize = 20;
/// Streams listed per direction on a terminal.
const TEXT_STREAMS: usize = 8;

/// Renders one capture.
pub fn render_capture(c: &CaptureReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "== {}", c.file);
    if let Some(e) = &c.error {
        let _ = writeln!(s, "   ERROR: {e}");
        return s;
    }
    let _ = writeln!(
        s,
        "   {}{}, {} packets, {} SCTP, {} TCP, {:.3} s, {} bad checksums, {} associations",
        c.format.as_deref().unwrap_or("?"),
        c.compressed_with()
            .map_or(String::new(), |z| format!(" ({z})")),
        c.packets,
        c.sctp_packets,
        c.tcp_packets,
        c.duration_s,
        c.bad_checksums,
        c.associations.len()
    );
    for w in &c.warnings {
        let _ = writeln!(s, "   warning: {w}");
    }
    render_accounting(&mut s, c);
    for a in &c.associations {
        render_assoc(&mut s, a);
    }
    for f in &c.tcp_flows {
        render_tcp(&mut s, f);
    }
    s
}

/// Duplicates, unassociated packets, checksum verdict and how the associations ended.
fn render_accounting(s: &mut String, c: &CaptureReport) {
    let acc = &c.accounting;
    let in_assocs: u64 = c.associations.iter().map(|a| a.packets).sum();
    let u = &acc.unassociated;
    let _ = writeln!(
        s,
        "   SCTP packets: {} in associations, {} unassociated, {} duplicate frames{}",
        in_assocs,
        u.packets,
        acc.duplicate_frames,
        match acc.checksum_offload {
            Some(true) => "; bad checksums: checksum offload at the capturing host",
            Some(false) => "; bad checksums: corruption",
            None => "",
        }
    );
    if u.packets > 0 {
        let reasons: Vec<String> = u.reasons.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        let chunks: Vec<String> = u.chunks.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        let _ = writeln!(
            s,
            "   unassociated: {} (frames {}-{}), chunks {}, {}",
            reasons.join(" "),
            u.first_frame.unwrap_or(0),
            u.last_frame.unwrap_or(0),
            chunks.join(" "),
            u.addresses.join(", ")
        );
    }
    if !acc.association_ends.is_empty() {
        let ends: Vec<String> = acc
            .association_ends
            .iter()
            .map(|(k, v)| format!("{k}:{v}"))
            .collect();
        let causes: Vec<String> = acc
            .abort_causes
            .iter()
            .map(|c| format!("{} ({}): {}", c.name, c.code, c.associations))
            .collect();
        let _ = writeln!(
            s,
            "   associations ended: {}{}",
            ends.join(" "),
            if causes.is_empty() {
                String::new()
            } else {
                format!("; ABORT causes: {}", causes.join(", "))
            }
        );
    }
}

/// "endpoint 0" / "endpoint 1" / "-".
fn by(b: Option<u8>) -> String {
    b.map_or("-".to_string(), |b| format!("endpoint {b}"))
}

fn render_tcp(s: &mut String, f: &crate::tcp::TcpFlowReport) {
    let _ = writeln!(
        s,
        "\n  TCP connection {}: {} -> {} (client by {}), {:.3}-{:.3} s, {} packets ({} duplicate frames), handshake {}{}",
        f.id,
        f.client,
        f.server,
        f.client_rule,
        f.first_s,
        f.last_s,
        f.packets,
        f.duplicate_frames,
        if f.handshake_seen { "seen" } else { "not seen" },
        f.handshake_ms
            .map_or(String::new(), |h| format!(" ({h:.3} ms)"))
    );
    for d in &f.directions {
        let _ = writeln!(
            s,
            "    direction {} -> {} (capture at: {}): {} bytes in {} segments, rtx {} (fast {}, timeout {}, spurious {})",
            d.sender,
            1 - d.sender,
            d.vantage,
            d.data_bytes,
            d.data_segments,
            d.retransmissions.total,
            d.retransmissions.fast,
            d.retransmissions.timeout,
            d.retransmissions.spurious
        );
        let _ = writeln!(
            s,
            "      RTT {} (base {}), first RTO {}, RTO.min {}{}, delayed ACK {}, max gap {}, max transfer {}",
            opt(d.rtt_ms.map(|x| x.median), " ms"),
            opt(d.base_rtt_ms, " ms"),
            opt(d.rto_first_ms, " ms"),
            opt(d.rto_min_ms, " ms"),
            d.rto_model
                .as_deref()
                .map_or(String::new(), |m| format!(" ({m} model)")),
            opt(d.delayed_ack_ms.map(|x| x.median), " ms"),
            opt(d.max_gap_ms, " ms"),
            opt(d.max_transfer_ms, " ms")
        );
        for o in &d.outages {
            let _ = writeln!(
                s,
                "      OUTAGE {:.3} -> {:.3} s: recovered after {:.1} ms, {} timeouts",
                o.start_s, o.recovered_s, o.recovery_ms, o.timeouts
            );
        }
    }
}

fn opt(v: Option<f64>, unit: &str) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.1}{unit}"))
}

fn render_directions(s: &mut String, a: &AssocReport) {
    for d in &a.directions {
        let _ = writeln!(
            s,
            "    direction {} -> {} (capture at: {}): {} DATA chunks, rtx {} (fast {}, timeout {}, spurious {}{})",
            d.sender,
            1 - d.sender,
            d.vantage,
            d.data_chunks,
            d.retransmissions.total,
            d.retransmissions.fast,
            d.retransmissions.timeout,
            d.retransmissions.spurious,
            match d.retransmissions.peer_discarded {
                Some(n) if n > 0 => format!(", discarded by the peer {n}"),
                _ => String::new(),
            }
        );
        let sd = d.sack_delay_ms.map_or("-".to_string(), |x| {
            format!("{:.1} ms (n={}, {:.1}-{:.1})", x.median, x.n, x.min, x.max)
        });
        let _ = writeln!(
            s,
            "      base RTT {}, peer SACK delay {sd}, SACKs/DATA packet {}, I-bit share {:.2}",
            opt(d.base_rtt_ms, " ms"),
            d.sacks_per_data_packet
                .map_or("-".into(), |x| format!("{x:.2}")),
            d.ibit_share
        );
        let _ = writeln!(
            s,
            "      RTO.min {} ({} ev), RTO.max {}, RTO.initial {}, Path.Max.Retrans {}, timeouts {}, max transfer {}",
            opt(d.rto_min_ms, " ms"),
            d.rto_min_evidence,
            opt(d.rto_max_ms, " ms"),
            opt(d.rto_initial_ms, " ms"),
            d.path_max_retrans.map_or("-".into(), |p| p.to_string()),
            d.timeouts.len(),
            opt(d.max_transfer_ms, " ms")
        );
        for f in &d.failovers {
            let _ = writeln!(
                s,
                "      FAILOVER at {:.3} s {} -> {}: failover time {} after {} timeouts{}",
                f.t_s,
                f.from,
                f.to,
                opt(f.failover_ms, " ms"),
                f.timeouts,
                if f.spurious {
                    format!(", SPURIOUS ({})", f.cause.as_deref().unwrap_or("unknown"))
                } else {
                    String::new()
                }
            );
            if let Some(r) = &f.recommendation {
                let _ = writeln!(s, "        fix: {r}");
            }
        }
        for b in &d.failbacks {
            let _ = writeln!(s, "      failback at {:.3} s to {}", b.t_s, b.to);
        }
        if let Some(line) = streams_line(a, d) {
            let _ = writeln!(s, "{line}");
        }
        if let Some(line) = hol_line(d) {
            let _ = writeln!(s, "{line}");
        }
    }
}

/// Head-of-line blocking of a direction in one line, with the one-stream counterfactual.
fn hol_line(d: &crate::report_infer::DirectionReport) -> Option<String> {
    let h = d.hol.as_deref()?;
    let clock = if h.clock == "arrivals" {
        "DATA arrivals"
    } else {
        "SACKs"
    };
    let waited = match &h.delay_ms {
        Some(x) => format!(
            "{} of {} ordered messages waited for an earlier one of their stream (max {:.1} ms, \
             p95 {:.1} ms, total {:.0} ms)",
            h.blocked_messages, h.ordered_messages, x.max, x.p95, h.delay_sum_ms
        ),
        None => format!(
            "none of {} ordered messages waited for an earlier one of their stream",
            h.ordered_messages
        ),
    };
    let single = match &h.single_stream_delay_ms {
        Some(x) => format!(
            "{} messages (max {:.1} ms, total {:.0} ms)",
            h.single_stream_blocked_messages, x.max, h.single_stream_delay_sum_ms
        ),
        None => "none".to_string(),
    };
    let single = if h.single_stream_waiting_at_end_messages > 0 {
        format!(
            "{single}, {} complete still waiting at the end",
            h.single_stream_waiting_at_end_messages
        )
    } else {
        single
    };
    let still = match h.waiting_at_end_max_ms {
        Some(ms) => format!(
            "; {} complete still waiting at the end (the longest {:.1} ms)",
            h.waiting_at_end_messages, ms
        ),
        None => String::new(),
    };
    let unattributed = if h.unattributed_messages > 0 {
        format!(
            "; {} behind a message the capture never showed",
            h.unattributed_messages
        )
    } else {
        String::new()
    };
    Some(format!(
        "      head-of-line ({clock}): {waited}{still}; on one stream: {single}{unattributed}"
    ))
}

/// The streams of a direction in one line: "streams 2 of 10 usable: 0: 5 msg 1200 B NGAP; ...".
fn streams_line(a: &AssocReport, d: &crate::report_infer::DirectionReport) -> Option<String> {
    if d.streams.is_empty() {
        return None;
    }
    let usable = a
        .stream_summary
        .streams_negotiated
        .get(usize::from(d.sender))
        .and_then(|n| n.usable_out)
        .map_or(String::new(), |u| format!(" of {u} usable"));
    let list: Vec<String> = d
        .streams
        .iter()
        .take(TEXT_STREAMS)
        .map(|x| {
            let mut t = format!("{}: {} msg {} B", x.stream, x.messages, x.bytes);
            if let Some(p) = x.ppids.first() {
                t.push_str(&format!(" PPID {}", p.ppid));
                if let Some(n) = &p.name {
                    t.push_str(&format!(" {n}"));
                }
                if x.ppids.len() > 1 {
                    t.push_str(&format!(" (+{} PPIDs)", x.ppids.len() - 1));
                }
            }
            if let Some(o) = x.ordered_share.filter(|&o| o < 1.0) {
                t.push_str(&format!(", {:.0}% unordered", (1.0 - o) * 100.0));
            }
            if x.fragmented > 0 {
                t.push_str(&format!(", {} fragmented", x.fragmented));
            }
            if x.ssn_gaps > 0 {
                t.push_str(&format!(", {} SSN gaps", x.ssn_gaps));
            }
            if let Some(n) = x.hol_blocked_messages.filter(|&n| n > 0) {
                t.push_str(&format!(", {n} waited (HOL)"));
            }
            t
        })
        .collect();
    let more = d.streams.len().saturating_sub(TEXT_STREAMS);
    Some(format!(
        "      streams {}{usable}: {}{}",
        d.streams.len(),
        list.join("; "),
        if more > 0 {
            format!("; +{more} more (JSON `streams`)")
        } else {
            String::new()
        }
    ))
}

fn render_assoc(s: &mut String, a: &AssocReport) {
    let ep = |i: usize| {
        let e = &a.endpoints[i];
        format!(
            "[{}]:{} tag {}",
            e.addresses.join(","),
            e.port,
            e.vtag.map_or("?".to_string(), |t| format!("0x{t:08x}"))
        )
    };
    let ul = &a.stream_summary.upper_layer;
    let upper = match (&ul.name, ul.ppid) {
        (Some(n), Some(p)) => format!(", upper layer {n} (PPID {p})"),
        (Some(n), None) => format!(", upper layer {n} (by port)"),
        (None, _) => String::new(),
    };
    let _ = writeln!(
        s,
        "\n  association {}: {} <-> {}{upper}",
        a.id,
        ep(0),
        ep(1)
    );
    let _ = writeln!(
        s,
        "    {:.3}-{:.3} s, {} packets, {} DATA bytes, handshake {}{}{}",
        a.first_s,
        a.last_s,
        a.packets,
        a.data_bytes,
        if a.handshake_seen { "seen" } else { "not seen" },
        a.handshake_ms
            .map_or(String::new(), |h| format!(" ({h:.3} ms)")),
        if a.aborted { ", ABORTED" } else { "" }
    );
    if a.stalled {
        let _ = writeln!(s, "    STALLED at the end (see the stalls below)");
    }
    for d in &a.directions {
        for st in &d.stalls {
            let _ = writeln!(
                s,
                "    stall of endpoint {}'s DATA: {} at {:.3} s{}: {}",
                d.sender,
                st.cause,
                st.t_s,
                st.end_s
                    .map_or(" (to the end)".to_string(), |e| format!(" to {e:.3} s")),
                st.evidence
            );
        }
    }
    render_stacks(s, a);
    let l = &a.lifecycle;
    let causes: Vec<String> = l
        .end
        .causes
        .iter()
        .map(|c| match &c.detail {
            Some(d) => format!("{} ({}): {d}", c.name, c.code),
            None => format!("{} ({})", c.name, c.code),
        })
        .collect();
    let _ = writeln!(
        s,
        "    ended: {}{}{}{}{}",
        l.end.kind.replace('_', " "),
        l.end
            .by
            .map_or(String::new(), |b| format!(" by endpoint {b}")),
        l.end.t_s.map_or(String::new(), |t| format!(" at {t:.3} s")),
        l.end
            .frame
            .map_or(String::new(), |f| format!(" (frame {f})")),
        if causes.is_empty() {
            String::new()
        } else {
            format!(", cause {}", causes.join("; "))
        }
    );
    if a.duplicate_frames > 0 || l.after_end_packets > 0 {
        let _ = writeln!(
            s,
            "    {} duplicate frames, {} packets after the end",
            a.duplicate_frames, l.after_end_packets
        );
    }
    let _ = writeln!(s, "    filter: {}", l.filter);
    if !l.events.is_empty() {
        let _ = writeln!(
            s,
            "    {:>10} {:>8} {:<10} {:<26} detail",
            "t s", "frame", "by", "event"
        );
        // The terminal shows the first events; the JSON and the `events` table have them all.
        for e in l.events.iter().take(TEXT_EVENTS) {
            let _ = writeln!(
                s,
                "    {:>10.3} {:>8} {:<10} {:<26} {}",
                e.t_s,
                e.frame,
                by(e.by),
                e.kind,
                e.detail
            );
        }
        let more = l.events.len().saturating_sub(TEXT_EVENTS) as u64 + l.events_dropped;
        if more > 0 {
            let _ = writeln!(s, "    ... {more} more events (JSON `events`)");
        }
    }
    render_directions(s, a);
    let chunks: Vec<String> = a.chunks.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    let _ = writeln!(s, "    chunks: {}", chunks.join(" "));
    let _ = writeln!(
        s,
        "    {:<6} {:<40} {:>8} {:>8} {:>12} {:>10} {:>10} {:>6} {:>10}",
        "sender",
        "path",
        "packets",
        "DATA",
        "DATA bytes",
        "RTT ms",
        "HB RTT ms",
        "rtx",
        "HB int ms"
    );
    for p in &a.paths {
        let _ = writeln!(
            s,
            "    {:<6} {:<40} {:>8} {:>8} {:>12} {:>10} {:>10} {:>6} {:>10}",
            p.sender,
            format!("{} -> {}", p.src, p.dst),
            p.packets,
            p.data_chunks,
            p.data_bytes,
            opt(p.infer.rtt_ms.map(|d| d.median), ""),
            opt(p.infer.hb_rtt_ms.map(|d| d.median), ""),
            p.infer.retransmissions,
            opt(p.infer.hb_interval_ms, "")
        );
        if let Some(t) = p.infer.dead_path_detect_s {
            let _ = writeln!(
                s,
                "           dead while idle, {} -> {} would be declared inactive after about {t:.1} s",
                p.src, p.dst
            );
        }
    }
}

/// Each endpoint's stack and confidence on one line (the evidence is in the JSON,
/// `endpoints[i].stack`); nothing when neither endpoint's INIT / INIT-ACK was captured.
fn render_stacks(s: &mut String, a: &AssocReport) {
    let seen = |e: &crate::report::EndpointReport| {
        e.stack.name.is_some() || !e.stack.evidence.starts_with("no INIT or INIT-ACK")
    };
    if !a.endpoints.iter().any(seen) {
        return;
    }
    let parts: Vec<String> = a
        .endpoints
        .iter()
        .enumerate()
        .map(|(i, e)| match &e.stack.name {
            Some(n) => format!("endpoint {i} {n} ({})", e.stack.confidence),
            None if seen(e) => format!("endpoint {i} unknown"),
            None => format!("endpoint {i} not seen"),
        })
        .collect();
    let _ = writeln!(s, "    stack: {}", parts.join(", "));
}
