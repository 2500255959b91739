//! How associations ended, through the whole router: the "Ended" column of the captures list and
//! the capture page, the association ends, ABORT causes, duplicate frames, unassociated packets
//! and the checksum verdict of the capture page, and the end panel, lifecycle table and
//! "Filter this association" of the association page. A capture built here (an ABORT with a
//! User-Initiated Abort cause, an INIT answered by ABORT, a duplicate frame, an out-of-the-blue
//! ABORT) always runs; a sample trace shows a graceful end; the public replay-attack capture
//! (`../shared`) runs when present.

use std::path::Path;

use analyzer::sctp::crc32c;
use axum::http::StatusCode;
use serde_json::Value;

use crate::pages_common;

use pages_common::{analysed, element, get, get_json, open, public_capture, unescape};

/// "10.1.0.2:38412" for endpoint `i` of an association in the JSON.
fn label(a: &Value, i: u64) -> String {
    let e = &a["endpoints"][i as usize];
    let addrs: Vec<&str> = e["addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    format!("{}:{}", addrs.join(","), e["port"])
}

// ---- a small capture built here ---------------------------------------------------------------

fn chunk(ctype: u8, flags: u8, value: &[u8]) -> Vec<u8> {
    let mut c = vec![ctype, flags];
    c.extend_from_slice(&((4 + value.len()) as u16).to_be_bytes());
    c.extend_from_slice(value);
    while !c.len().is_multiple_of(4) {
        c.push(0);
    }
    c
}

/// INIT / INIT-ACK value: initiate tag, a_rwnd, 2 streams each way, initial TSN, parameters.
fn init_value(tag: u32, tsn: u32, params: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&tag.to_be_bytes());
    v.extend_from_slice(&65536u32.to_be_bytes());
    v.extend_from_slice(&2u16.to_be_bytes());
    v.extend_from_slice(&2u16.to_be_bytes());
    v.extend_from_slice(&tsn.to_be_bytes());
    v.extend_from_slice(params);
    v
}

fn data(tsn: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = tsn.to_be_bytes().to_vec();
    v.extend_from_slice(&[0, 0, 0, (tsn & 0xff) as u8]); // stream 0, SSN
    v.extend_from_slice(&60u32.to_be_bytes()); // PPID (NGAP)
    v.extend_from_slice(payload);
    chunk(0, 0x03, &v)
}

/// DATA on stream `sid` with PPID `ppid`.
fn data_on(tsn: u32, sid: u16, ppid: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = tsn.to_be_bytes().to_vec();
    v.extend_from_slice(&sid.to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(&ppid.to_be_bytes());
    v.extend_from_slice(payload);
    chunk(0, 0x03, &v)
}

fn sack(cum: u32) -> Vec<u8> {
    let mut v = cum.to_be_bytes().to_vec();
    v.extend_from_slice(&65536u32.to_be_bytes());
    v.extend_from_slice(&[0; 4]);
    chunk(3, 0, &v)
}

/// An error cause TLV (padded).
fn cause(code: u16, body: &[u8]) -> Vec<u8> {
    let mut c = code.to_be_bytes().to_vec();
    c.extend_from_slice(&((4 + body.len()) as u16).to_be_bytes());
    c.extend_from_slice(body);
    while !c.len().is_multiple_of(4) {
        c.push(0);
    }
    c
}

struct Pkt {
    t_us: u64,
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    vtag: u32,
    chunks: Vec<Vec<u8>>,
}

/// One Ethernet / IPv4 / SCTP frame with valid checksums.
fn frame(p: &Pkt) -> Vec<u8> {
    let mut sctp = Vec::new();
    sctp.extend_from_slice(&p.sport.to_be_bytes());
    sctp.extend_from_slice(&p.dport.to_be_bytes());
    sctp.extend_from_slice(&p.vtag.to_be_bytes());
    sctp.extend_from_slice(&[0; 4]);
    for c in &p.chunks {
        sctp.extend_from_slice(c);
    }
    let crc = crc32c::compute(&sctp);
    sctp[8..12].copy_from_slice(&crc.to_le_bytes());
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&((20 + sctp.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 1, 0x40, 0, 64, 132, 0, 0]);
    ip.extend_from_slice(&p.src);
    ip.extend_from_slice(&p.dst);
    let sum: u32 = ip
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    let sum = (sum & 0xffff) + (sum >> 16);
    let sum = !((sum & 0xffff) + (sum >> 16)) as u16;
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let mut f = vec![
        0x02, 0, 0, 0, 0, p.dst[3], 0x02, 0, 0, 0, 0, p.src[3], 0x08, 0x00,
    ];
    f.extend_from_slice(&ip);
    f.extend_from_slice(&sctp);
    f
}

/// A classic microsecond pcap (Ethernet) of `pkts`.
fn pcap(pkts: &[Pkt]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    for p in pkts {
        let f = frame(p);
        let t = 1_700_000_000_000_000 + p.t_us;
        out.extend_from_slice(&((t / 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&((t % 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&f);
    }
    out
}

const A: [u8; 4] = [10, 1, 0, 1];
const B: [u8; 4] = [10, 1, 0, 2];
const C: [u8; 4] = [10, 1, 0, 3];
const TAG_A: u32 = 0x1111_1111;
const TAG_B: u32 = 0x2222_2222;
const TAG_C: u32 = 0x3333_3333;

/// Association 1 (10.1.0.1:5000 ↔ 10.1.0.2:38412): handshake, two DATA with their SACKs (the
/// first captured twice), then an ABORT from 10.1.0.2 with "User-Initiated Abort" ("maintenance").
/// Association 2 (10.1.0.3:5001 → 10.1.0.2:38412): an INIT answered by an ABORT with "Out of
/// Resource". Then an ABORT that matches no association.
fn abort_capture() -> Vec<u8> {
    let cookie = [0xc0u8; 8];
    let mut state_cookie = 7u16.to_be_bytes().to_vec();
    state_cookie.extend_from_slice(&12u16.to_be_bytes());
    state_cookie.extend_from_slice(&cookie);
    let ab = |t_us, vtag, chunks| Pkt {
        t_us,
        src: A,
        dst: B,
        sport: 5000,
        dport: 38412,
        vtag,
        chunks,
    };
    let ba = |t_us, vtag, chunks| Pkt {
        t_us,
        src: B,
        dst: A,
        sport: 38412,
        dport: 5000,
        vtag,
        chunks,
    };
    let pkts = vec![
        ab(0, 0, vec![chunk(1, 0, &init_value(TAG_A, 100, &[]))]),
        ba(
            10_000,
            TAG_A,
            vec![chunk(2, 0, &init_value(TAG_B, 500, &state_cookie))],
        ),
        ab(20_000, TAG_B, vec![chunk(10, 0, &cookie)]),
        ba(30_000, TAG_A, vec![chunk(11, 0, &[])]),
        ab(100_000, TAG_B, vec![data(100, b"hello, peer!")]),
        ab(100_100, TAG_B, vec![data(100, b"hello, peer!")]),
        ba(110_000, TAG_A, vec![sack(100)]),
        ab(200_000, TAG_B, vec![data(101, b"second msg")]),
        ba(210_000, TAG_A, vec![sack(101)]),
        ba(
            500_000,
            TAG_A,
            vec![chunk(6, 0, &cause(12, b"maintenance"))],
        ),
        Pkt {
            t_us: 600_000,
            src: C,
            dst: B,
            sport: 5001,
            dport: 38412,
            vtag: 0,
            chunks: vec![chunk(1, 0, &init_value(TAG_C, 900, &[]))],
        },
        Pkt {
            t_us: 610_000,
            src: B,
            dst: C,
            sport: 38412,
            dport: 5001,
            vtag: TAG_C,
            chunks: vec![chunk(6, 0, &cause(4, &[]))],
        },
        Pkt {
            t_us: 900_000,
            src: [10, 9, 9, 9],
            dst: B,
            sport: 7000,
            dport: 7001,
            vtag: 0x4444_4444,
            chunks: vec![chunk(6, 0, &[])],
        },
    ];
    pcap(&pkts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborted_and_refused_associations_are_shown_with_their_causes() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed(&app, "abort.pcap", &abort_capture()).await;
    let r = &v["result"];
    let assocs = r["associations"].as_array().unwrap();
    assert_eq!(assocs.len(), 2, "{r}");
    let (ab, hs) = (&assocs[0], &assocs[1]);
    assert_eq!(ab["end"]["kind"], "abort", "{}", ab["end"]);
    assert_eq!(ab["end"]["by"], 1);
    assert_eq!(ab["end"]["causes"][0]["code"], 12);
    assert_eq!(ab["end"]["causes"][0]["name"], "User-Initiated Abort");
    assert_eq!(hs["end"]["kind"], "handshake_failed", "{}", hs["end"]);
    assert_eq!(r["duplicate_frames"], 1, "{r}");
    assert_eq!(r["unassociated"]["packets"], 1, "{}", r["unassociated"]);
    assert_eq!(v["summary"]["association_ends"]["abort"], 1);

    // Captures list: how the capture's associations ended.
    let (s, html) = get(&app, "/").await;
    assert_eq!(s, StatusCode::OK);
    let row = element(&html, &format!("data-id=\"{id}\""), "</tr>");
    let ended = element(row, "<td class=\"ended", "</td>");
    assert!(ended.contains("bad"), "{ended}");
    assert!(
        ended.contains("1 aborted (User-Initiated Abort), 1 handshake failed (Out of Resource)"),
        "{ended}"
    );

    // Capture page: the Ended column in words with addresses, the ends, causes, duplicates and
    // the packet of no association.
    let (s, html) = get(&app, &format!("/captures/{id}")).await;
    assert_eq!(s, StatusCode::OK);
    let text = unescape(&html);
    let table = element(&text, "id=\"associations\"", "</table>");
    // The column headers sort on the server (issue 16 part 1): links.
    assert!(table.contains("data-sort=\"ended\">ended</a>"), "{table}");
    assert!(
        table.contains("aborted by 10.1.0.2:38412: User-Initiated Abort"),
        "{table}"
    );
    assert!(
        table.contains("handshake failed, ABORT by 10.1.0.2:38412: Out of Resource"),
        "{table}"
    );
    assert!(!table.contains("endpoint 1"), "indices shown: {table}");
    let causes = element(&text, "id=\"abort-causes\"", "</table>");
    assert!(
        causes.contains("<td class=\"num\">12</td><td>User-Initiated Abort</td>"),
        "{causes}"
    );
    let ends = element(&text, "id=\"association-ends\"", "</table>");
    assert!(ends.contains("aborted") && ends.contains("handshake failed"));
    assert!(element(&text, "id=\"duplicate-frames\"", "</dd>").contains(">1 — chunks: DATA 1"));
    assert!(element(&text, "id=\"unassociated-packets\"", "</dd>").contains(">1"));
    let un = element(&text, "id=\"unassociated\"", "</table>");
    assert!(un.contains("out-of-the-blue ABORT"), "{un}");
    assert!(
        element(&text, "id=\"unassociated-addresses\"", "</dd>").contains("10.9.9.9 → 10.1.0.2")
    );
    assert!(text.contains(">bad checksums</a></dt><dd>0</dd>"));

    // Association page of the ABORT: the end panel in the warning style, before a "no
    // failover" that is not green; the causes with their details; the lifecycle table.
    let (s, html) = get(&app, &format!("/captures/{id}/associations/0")).await;
    assert_eq!(s, StatusCode::OK);
    let text = unescape(&html);
    let panel = element(&text, "id=\"end\"", "</section>");
    assert!(text.contains("class=\"finding end end-bad\" id=\"end\" data-kind=\"abort\""));
    assert!(
        panel
            .contains("Ended: Aborted by 10.1.0.2:38412: User-Initiated Abort at 0.5 s (frame 10)"),
        "{panel}"
    );
    let causes = element(&text, "id=\"end-causes\"", "</table>");
    assert!(causes.contains("<td class=\"num\">12</td><td>User-Initiated Abort</td>"));
    if let Some(d) = ab["end"]["causes"][0]["detail"].as_str() {
        assert!(causes.contains(d), "{d} not in {causes}");
    }
    assert!(panel.contains("frame.number == 10"), "{panel}");
    let nf = element(&text, "id=\"no-failover\"", "</p>");
    assert!(
        !text.contains("<p class=\"ok\" id=\"no-failover\">"),
        "{nf}"
    );
    assert!(text.find("id=\"end\"") < text.find("id=\"no-failover\""));
    let filter = ab["filter"].as_str().unwrap();
    let top = element(&text, "id=\"assoc-filter\"", "</p>");
    assert!(top.contains("Filter this association"));
    assert!(top.contains(&format!("<code class=\"selectable\">{filter}</code>")));
    assert!(top.contains(&format!("data-copy=\"{filter}\"")));
    let life = element(&text, "id=\"lifecycle-events\"", "</table>");
    let events = ab["events"].as_array().unwrap();
    assert_eq!(life.matches("<tr class=\"event").count(), events.len());
    for (kind, words) in [
        ("init", "INIT"),
        ("init_ack", "INIT-ACK"),
        ("cookie_echo", "COOKIE-ECHO"),
        ("cookie_ack", "COOKIE-ACK"),
        ("abort", "ABORT"),
    ] {
        assert!(
            life.contains(&format!("data-kind=\"{kind}\"")),
            "{kind} missing"
        );
        assert!(
            life.contains(&format!("event-words\">{words}</td>")),
            "{words} missing"
        );
    }
    let abort_row = element(life, "data-kind=\"abort\"", "</tr>");
    assert!(abort_row.contains(">10.1.0.2:38412</td>"), "{abort_row}");
    assert!(abort_row.contains("User-Initiated Abort (cause 12)"));
    assert!(abort_row.contains("frame.number == 10 && sctp.chunk_type == 6"));
    assert!(
        !life.contains("endpoint 0") && !life.contains("endpoint 1"),
        "{life}"
    );

    // The failed handshake: also a warning, with its cause.
    let (_, html) = get(&app, &format!("/captures/{id}/associations/1")).await;
    let text = unescape(&html);
    assert!(text.contains("data-kind=\"handshake_failed\""));
    assert!(text.contains("class=\"finding end end-bad\""));
    assert!(text.contains("Out of Resource"));
    assert!(!text.contains("<p class=\"ok\" id=\"no-failover\">"));
    // No DATA: no chart placeholders, a sentence saying why (issue 16 part 5).
    assert!(!text.contains("data-chart="), "charts without DATA");
    let why = element(&text, "id=\"no-data-charts\"", "</p>");
    assert!(
        why.contains("No charts: the capture holds no DATA chunk of this association (2 packets: ABORT 1, INIT 1)"),
        "{why}"
    );

    // The timeline chart marks the lifecycle events.
    let c = get_json(
        &app,
        &format!("/api/captures/{id}/associations/0/charts/timeline"),
    )
    .await;
    let evs = c["events"].as_array().unwrap();
    let abort = evs
        .iter()
        .find(|e| e["kind"] == "abort")
        .expect("ABORT marker");
    assert_eq!(abort["short"], "ABORT");
    assert_eq!(abort["frame"], 10);
    assert!(abort["label"]
        .as_str()
        .unwrap()
        .contains("from 10.1.0.2:38412: User-Initiated Abort"));
    assert!(evs.iter().any(|e| e["short"] == "INIT"));
}

/// A sample trace ends with a SHUTDOWN: "shutdown by" the closing side, a green end panel and
/// the lifecycle from INIT to SHUTDOWN-COMPLETE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_of_a_sample_trace() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-traces/spur_pmr1_rtomin30_sender.pcap");
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed(&app, "spur.pcap", &bytes).await;
    let a = &v["result"]["associations"][0];
    let end = &a["end"];
    assert_eq!(end["kind"], "shutdown", "{end}");
    let by = label(a, end["by"].as_u64().expect("closing side"));

    let (_, html) = get(&app, &format!("/captures/{id}")).await;
    let text = unescape(&html);
    let table = element(&text, "id=\"associations\"", "</table>");
    assert!(table.contains("<td class=\"ended ok\" title=\""), "{table}");
    assert!(table.contains(&format!("shutdown by {by}</td>")), "{table}");
    assert!(element(&text, "id=\"ends-summary\"", "</p>").contains("1 shutdown"));
    assert!(!text.contains("id=\"abort-causes\""));

    let (_, html) = get(&app, &format!("/captures/{id}/associations/0")).await;
    let text = unescape(&html);
    assert!(text.contains("class=\"finding end end-ok\" id=\"end\" data-kind=\"shutdown\""));
    let panel = element(&text, "id=\"end\"", "</section>");
    assert!(
        panel.contains(&format!("Ended: Shutdown by {by}")),
        "{panel}"
    );
    assert!(panel.contains("graceful shutdown started by"), "{panel}");
    let life = element(&text, "id=\"lifecycle-events\"", "</table>");
    let events = a["events"].as_array().unwrap();
    assert_eq!(life.matches("<tr class=\"event").count(), events.len());
    assert_eq!(events[0]["kind"], "init");
    for words in ["INIT", "COOKIE-ACK", "SHUTDOWN", "SHUTDOWN-COMPLETE"] {
        assert!(
            life.contains(&format!("event-words\">{words}</td>")),
            "{words}"
        );
    }
    let filter = a["filter"].as_str().unwrap();
    assert!(element(&text, "id=\"assoc-filter\"", "</p>").contains(filter));
}

/// The public replay-attack capture (`../shared/captures/public`), when present: every
/// association that was aborted or whose handshake failed has the warning end panel with its
/// causes; the capture page has the ABORT causes and the checksum verdict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_replay_attack_capture() {
    let name = "Spartan-F117__VAPT_CoreNetwork5G__log_analysis_replayAttack.pcapng";
    let Some(bytes) = public_capture(name) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed(&app, name, &bytes).await;
    let r = &v["result"];
    let (_, html) = get(&app, &format!("/captures/{id}")).await;
    let text = unescape(&html);
    for c in r["abort_causes"].as_array().unwrap() {
        let causes = element(&text, "id=\"abort-causes\"", "</table>");
        assert!(
            causes.contains(&format!(
                "<td class=\"num\">{}</td><td>{}</td>",
                c["code"],
                c["name"].as_str().unwrap()
            )),
            "{causes}"
        );
    }
    if let Some(offload) = r["checksum_offload"].as_bool() {
        let verdict = if offload {
            "checksum offload at the capturing host"
        } else {
            "corruption"
        };
        assert!(
            text.contains(&format!(
                ">bad checksums</a></dt><dd>{} bad checksums — {verdict}",
                r["checksum_evidence"]["bad"]
            )),
            "checksum verdict missing"
        );
    }
    let mut bad = 0;
    for a in r["associations"].as_array().unwrap() {
        let kind = a["end"]["kind"].as_str().unwrap();
        let (_, html) = get(&app, &format!("/captures/{id}/associations/{}", a["id"])).await;
        let text = unescape(&html);
        assert!(
            text.contains(&format!("id=\"end\" data-kind=\"{kind}\"")),
            "{}",
            a["id"]
        );
        if matches!(kind, "abort" | "handshake_failed") {
            bad += 1;
            assert!(
                text.contains("class=\"finding end end-bad\""),
                "{}",
                a["id"]
            );
            assert!(!text.contains("<p class=\"ok\" id=\"no-failover\">"));
            for c in a["end"]["causes"].as_array().unwrap() {
                assert!(text.contains(c["name"].as_str().unwrap()));
            }
            if let Some(by) = a["end"]["by"].as_u64() {
                let panel = element(&text, "id=\"end\"", "</section>");
                assert!(panel.contains(&label(a, by)), "{panel}");
            }
        }
        assert!(text.contains(a["filter"].as_str().unwrap()));
    }
    assert!(bad > 0, "no aborted association in {name}");
}

/// Stream problems: NGAP port 38412 with a PPID 0 message (`ppid_missing`) and DATA on stream 5
/// of 2 inbound streams (`invalid_stream`): the diagnosis lists both in words with their filter,
/// the streams tables and the negotiated streams are shown, and no raw kind is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_stream_and_missing_ppid_are_diagnosed() {
    let cookie = [0xc0u8; 8];
    let mut state_cookie = 7u16.to_be_bytes().to_vec();
    state_cookie.extend_from_slice(&12u16.to_be_bytes());
    state_cookie.extend_from_slice(&cookie);
    let pkt = |t_us, fwd: bool, vtag, chunks| Pkt {
        t_us,
        src: if fwd { A } else { B },
        dst: if fwd { B } else { A },
        sport: if fwd { 5000 } else { 38412 },
        dport: if fwd { 38412 } else { 5000 },
        vtag,
        chunks,
    };
    let pkts = vec![
        pkt(0, true, 0, vec![chunk(1, 0, &init_value(TAG_A, 100, &[]))]),
        pkt(
            10_000,
            false,
            TAG_A,
            vec![chunk(2, 0, &init_value(TAG_B, 500, &state_cookie))],
        ),
        pkt(20_000, true, TAG_B, vec![chunk(10, 0, &cookie)]),
        pkt(30_000, false, TAG_A, vec![chunk(11, 0, &[])]),
        pkt(100_000, true, TAG_B, vec![data(100, b"ngap one")]),
        pkt(110_000, false, TAG_A, vec![sack(100)]),
        pkt(200_000, true, TAG_B, vec![data_on(101, 0, 0, b"no ppid")]),
        pkt(210_000, false, TAG_A, vec![sack(101)]),
        pkt(300_000, true, TAG_B, vec![data_on(102, 5, 60, b"stream 5")]),
        pkt(310_000, false, TAG_A, vec![sack(102)]),
    ];
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed(&app, "streams.pcap", &pcap(&pkts)).await;
    let a = &v["result"]["associations"][0];
    let kinds: Vec<&str> = a["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"ppid_missing"), "{kinds:?}");
    assert!(kinds.contains(&"invalid_stream"), "{kinds:?}");
    assert_eq!(a["upper_layer"]["name"], "NGAP", "{}", a["upper_layer"]);

    let (s, html) = get(&app, &format!("/captures/{id}/associations/0")).await;
    assert_eq!(s, StatusCode::OK);
    let text = unescape(&html);
    let diag = element(&text, "id=\"diagnosis\"", "</section>");
    let problems = element(diag, "id=\"stream-problems\"", "<section");
    for (kind, words) in [
        ("invalid_stream", "DATA on an invalid stream"),
        ("ppid_missing", "PPID missing (0 instead of the port's)"),
    ] {
        let e = a["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["kind"] == kind)
            .unwrap();
        let block = element(problems, &format!("data-kind=\"{kind}\""), "</button>");
        assert!(block.contains(words), "{block}");
        assert!(block.contains(e["filter"].as_str().unwrap()), "{block}");
        // The detail names endpoints by address.
        assert!(block.contains("10.1.0.1:5000"), "{block}");
        assert!(!block.contains("endpoint 0"), "{block}");
    }
    let life = element(&text, "id=\"lifecycle-events\"", "</table>");
    assert!(life.contains("event-words\">DATA on an invalid stream</td>"));
    // Visible text only (attributes carry the kinds for scripts and styles).
    let mut visible = String::new();
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => visible.push(c),
            _ => {}
        }
    }
    for raw in [
        "invalid_stream",
        "ppid_missing",
        "streams_added",
        "stream_reset",
    ] {
        assert!(!visible.contains(raw), "raw identifier {raw}");
    }
    let streams = element(&text, "id=\"streams-0\"", "</table>");
    assert!(streams.contains("NGAP (PPID 60): 1 message"), "{streams}");
    assert!(
        streams.contains("PPID 0 (not specified): 1 message"),
        "{streams}"
    );
    assert!(streams.contains("<td class=\"num\">5</td>"), "{streams}");
    let neg = element(&text, "id=\"streams-negotiated\"", "</table>");
    assert!(neg.contains("<td class=\"num\">2</td>"), "{neg}");
    assert!(element(&text, "id=\"upper-layer\"", "</p>").contains("NGAP (PPID 60)"));

    let (_, html) = get(&app, &format!("/captures/{id}")).await;
    let table = element(&html, "id=\"associations\"", "</table>");
    assert!(
        table.contains("<td class=\"upper-layer\">NGAP</td>"),
        "{table}"
    );
    let (_, html) = get(&app, "/").await;
    assert!(html.contains("<td class=\"upper-layer\">NGAP</td>"));
}
