//! Explained figures and the first start (issue 16 parts 2, 3 and 5), through the whole router:
//! the `/help` page holds every definition each page links to; the labels of the capture,
//! association and compare pages link to it with a tooltip; identifiers are shown in words;
//! TCP tables are tables; the RTO estimate carries its RTO.min floor; the home page tells what
//! the tool does and opens three stories of the sample traces; chart ranges stay in the data.

use std::collections::BTreeSet;

use axum::http::StatusCode;
use axum::Router;
use serde_json::Value;

use crate::pages_common;

use pages_common::{analysed_sample, element, get, get_json, open, unescape};

/// Every `/help#anchor` a page links to.
fn help_links(html: &str) -> BTreeSet<String> {
    html.split("href=\"/help#")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect()
}

/// Every `id="..."` of a page.
fn ids(html: &str) -> BTreeSet<String> {
    html.split(" id=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect()
}

/// The `<dt>` elements of the page's `<dl class="...">` lists: each must hold a definition link.
fn unlinked_dts(html: &str) -> Vec<String> {
    html.split("<dt>")
        .skip(1)
        .map(|s| s[..s.find("</dt>").unwrap()].to_string())
        .filter(|dt| !dt.contains("class=\"def\""))
        .collect()
}

async fn page(app: &Router, uri: &str) -> String {
    let (s, html) = get(app, uri).await;
    assert_eq!(s, StatusCode::OK, "{uri}");
    html
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_link_to_the_help_page_and_identifiers_read_as_words() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let help = page(&app, "/help").await;
    let anchors = ids(&help);
    for f in &dashboard::help::defs().figure {
        assert!(
            anchors.contains(&format!("fig-{}", f.id)),
            "{} not on /help",
            f.id
        );
        assert!(help.contains(&dashboard::help::escape(&f.unit)) || help.contains(&f.unit));
    }
    for n in &dashboard::help::defs().names {
        for v in &n.value {
            assert!(anchors.contains(&format!("name-{}-{}", n.id, v.id)));
        }
    }

    let (fo_id, fo) = analysed_sample(&app, "cut_p20_sack40_sender.pcap").await;
    let (sp_id, sp) = analysed_sample(&app, "spur_pmr1_rtomin30_sender.pcap").await;
    let (mx_id, mx) = analysed_sample(&app, "mixed_p20_cut5_rec8_sender.pcap").await;

    let pages = [
        "/".to_string(),
        format!("/captures/{fo_id}"),
        format!("/captures/{fo_id}/associations/0"),
        format!("/captures/{sp_id}/associations/0"),
        format!("/captures/{mx_id}"),
        format!("/captures/{mx_id}/compare"),
    ];
    let mut linked = BTreeSet::new();
    for uri in &pages {
        let html = page(&app, uri).await;
        let links = help_links(&html);
        assert!(!links.is_empty(), "{uri} links to no definition");
        for l in &links {
            assert!(
                anchors.contains(l),
                "{uri} links to /help#{l}, which /help lacks"
            );
        }
        // Every label of a headline or facts list is a definition link with its tooltip.
        let bare = unlinked_dts(&html);
        assert!(
            bare.is_empty(),
            "{uri}: labels without a definition: {bare:?}"
        );
        linked.extend(links);
    }
    for f in [
        "fig-outage_start",
        "fig-failover_time",
        "fig-vantage",
        "fig-burstiness",
        "fig-ibit_share",
        "fig-ack_delay",
        "fig-recovery",
        "fig-rto_estimate",
        "fig-ssn_gaps",
        "fig-streams_negotiated",
    ] {
        assert!(linked.contains(f), "no page links to {f}");
    }
    let a = page(&app, &format!("/captures/{fo_id}/associations/0")).await;
    assert!(
        a.contains("href=\"/help#fig-outage_start\" title=\"s — First original on the old path"),
        "the outage start label carries unit and meaning"
    );

    // The failover's own page: vantage and burstiness in words; the RFC RTO with its floor.
    let d = &fo["result"]["associations"][0]["directions"][0];
    assert_eq!(d["vantage"], "sender");
    let text = unescape(&a);
    assert!(text.contains("at the DATA sender — "), "vantage in words");
    // This usrsctp run shows no RTO.min: the raw estimate alone, named as what it is.
    assert!(d["rto_min_ms"].is_null());
    let t = d["timeouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["est_rto_ms"].is_number())
        .expect("a timeout with an estimate");
    let shown = format!(
        "SRTT + 4 RTTVAR {} (RTO.min unknown)",
        round1(t["est_rto_ms"].as_f64().unwrap())
    );
    assert!(text.contains(&shown), "{shown} not on the page");
    assert!(!text.contains("est. RTO"));

    // The spurious failover: its cause in words, never the identifier.
    let f = &sp["result"]["associations"][0]["directions"][0]["failovers"][0];
    assert_eq!(f["cause"], "sack_delay_exceeds_rto");
    let s = unescape(&page(&app, &format!("/captures/{sp_id}/associations/0")).await);
    assert!(s.contains("the peer's SACK delay exceeds this sender's RTO"));
    assert!(
        !s.contains("sack_delay_exceeds_rto"),
        "the identifier is shown"
    );

    // Compare page: metric names linked, no raw key as a label, identifiers in words, /help linked.
    let c = unescape(&page(&app, &format!("/captures/{mx_id}/compare")).await);
    let table = element(&c, "id=\"comparison\"", "</table>");
    assert!(table.contains("<tr data-key=\"ack_delay_ms\"><th scope=\"row\"><a class=\"def\" href=\"/help#fig-ack_delay\""));
    for raw in [">ack_delay_ms<", ">recovery<", ">max_gap_ms<"] {
        assert!(!table.contains(raw), "raw name {raw} shown");
    }
    assert!(table.contains(">failed over<") && table.contains(">stalled until the path returned<"));
    assert!(!c.contains("see METRICS.md"));
    assert!(c.contains("<a href=\"/help#sec-tcp\">"));

    // TCP tables: cells are values, not "[2 items]"; both directions' SYN options in words.
    let cp = unescape(&page(&app, &format!("/captures/{mx_id}")).await);
    let tcp = element(&cp, "<section id=\"tcp\">", "</section>");
    assert!(!tcp.contains("items]"), "{tcp}");
    let flow = &mx["result"]["tcp_flows"][0];
    assert!(tcp.contains(&format!(
        "{} → {}",
        flow["client"].as_str().unwrap(),
        flow["server"].as_str().unwrap()
    )));
    assert!(tcp.contains("MSS "), "SYN options shown");
    assert!(tcp.contains("href=\"/help#fig-tcp_rto_model\""));
}

fn round1(v: f64) -> String {
    let s = format!("{v:.1}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_page_explains_the_tool_and_opens_three_stories() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    // Before the samples are there: the stories say how to get them, with no dead link.
    let home = unescape(&page(&app, "/").await);
    let intro = element(&home, "<section class=\"intro\"", "</section>");
    assert!(
        intro.contains("rebuilds every SCTP association")
            && intro.contains("explains what it found")
    );
    assert!(!intro.contains("story-link"));
    assert!(intro.contains("upload sample-traces/cut_p20_sack40_sender.pcap to open it"));

    let (fo, _) = analysed_sample(&app, "cut_p20_sack40_sender.pcap").await;
    let (sp, spv) = analysed_sample(&app, "spur_pmr1_rtomin30_sender.pcap").await;
    let (mx, _) = analysed_sample(&app, "mixed_p20_cut5_rec8_sender.pcap").await;
    let home = unescape(&page(&app, "/").await);
    let link = |slug: &str| {
        let li = element(&home, &format!("id=\"story-{slug}\""), "</li>");
        let at = li.find("href=\"").expect("a link") + 6;
        li[at..at + li[at..].find('"').unwrap()].to_string()
    };
    assert_eq!(
        link("failover"),
        format!("/captures/{fo}/associations/0#diagnosis")
    );
    let spurious_assoc = spv["result"]["associations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| {
            a["directions"].as_array().unwrap().iter().any(|d| {
                d["failovers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["spurious"] == true)
            })
        })
        .unwrap()["id"]
        .clone();
    assert_eq!(
        link("spurious"),
        format!("/captures/{sp}/associations/{spurious_assoc}#diagnosis")
    );
    assert_eq!(link("sctp-vs-tcp"), format!("/captures/{mx}/compare"));

    // Each story's page tells it: a real failover, a spurious one with its fix, SCTP beside TCP.
    let p = unescape(&page(&app, &link("failover").replace("#diagnosis", "")).await);
    assert!(p.contains("<span class=\"badge warn\">failover</span>"));
    let p = unescape(&page(&app, &link("spurious").replace("#diagnosis", "")).await);
    assert!(p.contains("Spurious failover at") && p.contains("<strong>Recommendation:</strong>"));
    let p = unescape(&page(&app, &link("sctp-vs-tcp")).await);
    let cols = element(&p, "id=\"comparison\"", "</thead>");
    assert!(cols.contains("SCTP #") && cols.contains("TCP #"), "{cols}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chart_ranges_stay_inside_the_data_and_tsn_is_relative() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed_sample(&app, "cut_p20_sack40_sender.pcap").await;
    let a = &v["result"]["associations"][0];
    let (first, last) = (
        a["first_s"].as_f64().unwrap(),
        a["last_s"].as_f64().unwrap(),
    );
    let base = format!("/api/captures/{id}/associations/0/charts");
    // A pan past the start: the range starts at the data's start, not below it.
    let c: Value = get_json(&app, &format!("{base}/tsn?from=-2&to=1&width=400")).await;
    assert_eq!(c["range"][0].as_f64().unwrap(), first, "{}", c["range"]);
    assert!(c["range"][1].as_f64().unwrap() <= 1.0);
    let c: Value = get_json(
        &app,
        &format!(
            "{base}/timeline?from={}&to={}&width=400",
            last - 1.0,
            last + 5.0
        ),
    )
    .await;
    assert_eq!(c["range"][1].as_f64().unwrap(), last);
    // TSNs relative to the first DATA's, and said so.
    let c: Value = get_json(&app, &format!("{base}/tsn?width=400")).await;
    assert!(
        c["note"].as_str().unwrap().ends_with("(the first DATA's)"),
        "{}",
        c["note"]
    );
    let first_y = c["series"][0]["y"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|y| y.as_f64())
        .unwrap();
    assert_eq!(first_y, 0.0);
    // The RTT chart: SRTT + 4 RTTVAR named as such; no RFC RTO without an inferred RTO.min.
    let c: Value = get_json(&app, &format!("{base}/rtt?width=400")).await;
    let labels = series_labels(&c);
    assert!(
        labels.iter().any(|l| l.starts_with("SRTT + 4 RTTVAR ")),
        "{labels:?}"
    );
    assert!(!labels
        .iter()
        .any(|l| l.contains("estimated RTO") || l.starts_with("RFC RTO")));
}

fn series_labels(c: &Value) -> Vec<String> {
    c["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap().to_string())
        .collect()
}
