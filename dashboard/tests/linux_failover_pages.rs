//! A Linux kernel failover through the whole router (sample traces `lk_*`, copied from the
//! Linux lab): the failover card shows its cause, the expiry chain with each observed RTO and the
//! what-if figures with the Linux default and its knobs named (sysctl and socket option); the
//! direction facts name them too; the paths table shows the heartbeat period / interval. And the
//! zero-window lab run's stall (usrsctp sample `zerowin_p10`): headline, diagnosis, TSN chart.

use std::path::Path;

use axum::http::StatusCode;

use crate::pages_common;

use pages_common::{analysed, element, get, get_json, open, unescape};

async fn page(name: &str) -> (serde_json::Value, String) {
    let (a, html, _) = page_and_tsn_chart(name).await;
    (a, html)
}

/// The association's JSON, its page and its TSN chart (the API the page's chart reads).
async fn page_and_tsn_chart(name: &str) -> (serde_json::Value, String, serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-traces")
        .join(format!("{name}_sender.pcap"));
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed(&app, "lk.pcap", &bytes).await;
    let (s, html) = get(&app, &format!("/captures/{id}/associations/0")).await;
    assert_eq!(s, StatusCode::OK);
    let tsn = get_json(
        &app,
        &format!("/api/captures/{id}/associations/0/charts/tsn"),
    )
    .await;
    (v["result"]["associations"][0].clone(), unescape(&html), tsn)
}

/// Linux defaults (RTO.min 1 s, PF on): one expiry, then the what-if with RTO.min 100 ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linux_default_failover_card_names_the_default_and_its_knobs() {
    let (a, text) = page("lk_default_cut").await;
    let d = a["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| !d["failovers"].as_array().unwrap().is_empty())
        .expect("a direction with a failover");
    let f = &d["failovers"][0];
    assert_eq!(f["cause"], "path_failure", "{f}");
    assert_eq!(f["policy"], "pf", "{f}");
    let card = element(&text, "failover-card", "</div>");
    assert!(
        card.contains("<strong>Cause:</strong> path failure"),
        "{card}"
    );
    assert!(card.contains("Expiry chain on"), "{card}");
    let chain = element(card, "<ol class=\"chain\">", "</ol>");
    assert_eq!(
        chain.matches("<li>").count() as u64,
        f["timeouts"].as_u64().unwrap(),
        "{chain}"
    );
    assert!(chain.contains("RTO 1"), "{chain}");
    let whatif = element(card, "<p class=\"whatif\">", "</p>");
    assert!(whatif.contains("<strong>What-if:</strong>"), "{whatif}");
    assert!(whatif.contains("with RTO.min 100 ms"), "{whatif}");
    assert!(whatif.contains("(the Linux default 1 s)"), "{whatif}");
    assert!(
        whatif.contains("net.sctp.rto_min or SCTP_RTOINFO srto_min"),
        "{whatif}"
    );
    assert!(
        whatif.contains(f["recommendation"].as_str().unwrap()),
        "{whatif}"
    );
    let eps = element(&text, "id=\"endpoints\"", "</table>");
    assert_eq!(eps.matches("data-stack=\"linux\"").count(), 2, "{eps}");
}

/// PF off, PMR 2, heartbeat interval 1 s: the what-if names PF's knobs, the direction facts the
/// SACK delay's, and the paths table shows the heartbeat interval the JSON gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linux_rfc_failover_shows_pf_what_if_and_the_heartbeat_interval() {
    let (a, text) = page("lk_pf0_sack40_rtomin100_pmr2").await;
    let card = element(&text, "failover-card", "</div>");
    let whatif = element(card, "<p class=\"whatif\">", "</p>");
    assert!(
        whatif.contains("with PF (pf_retrans 0: net.sctp.pf_enable 1, net.sctp.pf_retrans 0"),
        "{whatif}"
    );
    let sender = a["directions"][0]["sender"].as_u64().unwrap();
    let facts = element(&text, &format!("id=\"direction-{sender}\""), "</section>");
    assert!(
        facts.contains("RFC 9260 8.2: after Path.Max.Retrans + 1 expiries"),
        "{facts}"
    );
    assert!(
        facts.contains("net.sctp.sack_timeout or SCTP_DELAYED_SACK sack_delay"),
        "{facts}"
    );
    let p = a["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| !p["hb_interval_ms"].is_null())
        .expect("a path with a heartbeat interval");
    let h = p["hb_interval_ms"].as_f64().unwrap();
    assert!((900.0..=1100.0).contains(&h), "configured 1000 ms: {p}");
    let paths = element(&text, "id=\"paths\"", "</table>");
    assert!(paths.contains("HB period / interval (ms)"), "{paths}");
    assert!(paths.contains(&format!(" / {}", h.round())), "{paths}");
    assert!(paths.contains("title=\""), "{paths}");
    assert!(paths.contains("dead idle path noticed in"), "{paths}");
}

/// The lab's zero-window run (usrsctp; the server stops reading): the headline says stalled,
/// the diagnosis shows the stall in words with its evidence and filter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_window_stall_is_in_the_headline_and_the_diagnosis() {
    let (a, text, tsn) = page_and_tsn_chart("zerowin_p10").await;
    // Shaded over the whole height of the TSN chart from its start to the data's end.
    let bands = tsn["bands"].as_array().unwrap();
    assert_eq!(bands.len(), 1, "{tsn}");
    assert_eq!(bands[0]["kind"], "stall");
    assert_eq!(bands[0]["full_height"], true);
    assert!(bands[0]["label"]
        .as_str()
        .unwrap()
        .starts_with("stall: the receiver's window closed (zero window)"));
    assert_eq!(a["stalled"], true, "{a}");
    let st = &a["directions"][0]["stalls"][0];
    assert_eq!(st["cause"], "zero_window");
    let head = element(&text, "<dl class=\"headline\">", "</dl>");
    assert!(head.contains("STALLED at the end (1 stall(s))"), "{head}");
    let card = element(&text, "data-cause=\"zero_window\"", "</div>");
    assert!(
        card.contains("the receiver's window closed (zero window)"),
        "{card}"
    );
    assert!(card.contains("to the end"), "{card}");
    assert!(card.contains(st["evidence"].as_str().unwrap()), "{card}");
    assert!(card.contains(st["filter"].as_str().unwrap()), "{card}");
}
