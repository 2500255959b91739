//! Scale (issue 16 part 1): a capture of 10,000 associations made with `analyzer::synth`
//! (`pages_common::many`). Every page and API answer is measured (size and time printed, the
//! table of `bench/dashboard.sh --many`) and every size asserted under 1 MB; pagination,
//! sorting and filtering of the association list, pages and API alike.

use crate::pages_common;

use std::time::Instant;

use axum::Router;
use pages_common::{analysed, get, many, open};

const MB: usize = 1 << 20;

/// (path, bytes, ms) of every page and API answer of capture `id`.
async fn measure(app: &Router, id: &str, paths: &[String]) -> Vec<(String, usize, f64)> {
    let mut out = Vec::new();
    for p in paths {
        let t = Instant::now();
        let (s, body) = get(app, p).await;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        assert!(s.is_success(), "{p}: {s} {}", &body[..body.len().min(300)]);
        out.push((p.replace(id, "{id}"), body.len(), ms));
    }
    out
}

fn every_path(id: &str, assocs: &[usize]) -> Vec<String> {
    let mut v: Vec<String> = vec![
        "/".into(),
        format!("/captures/{id}"),
        format!("/captures/{id}/compare"),
        "/api/captures".into(),
        format!("/api/captures/{id}"),
        format!("/captures/{id}?offset=5000&sort=packets&order=desc"),
        format!("/captures/{id}?failover=1"),
        format!("/captures/{id}?q=10.201.2.1&limit=500"),
        format!("/captures/{id}/compare?metric=retransmissions&top=50"),
        format!("/api/captures/{id}?offset=5000&limit=50"),
        format!("/api/captures/{id}/associations"),
        format!("/api/captures/{id}/associations?end=abort&sort=packets"),
    ];
    for n in assocs {
        v.push(format!("/captures/{id}/associations/{n}"));
        v.push(format!("/api/captures/{id}/associations/{n}"));
        v.push(format!(
            "/api/captures/{id}/associations/{n}/tables/failovers?sort=failover_ms&order=desc"
        ));
    }
    for kind in ["tsn", "rtt", "sack_delay", "throughput", "timeline"] {
        for n in assocs {
            v.push(format!(
                "/api/captures/{id}/associations/{n}/charts/{kind}?width=1200"
            ));
        }
    }
    for kind in ["throughput", "gaps"] {
        v.push(format!(
            "/api/captures/{id}/compare/charts/{kind}?width=1200"
        ));
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_associations_every_answer_under_1_mb() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let bytes = many::many_associations(10_000);
    let t = Instant::now();
    let (id, _) = analysed(&app, "many.pcap", &bytes).await;
    eprintln!(
        "upload + analysis: {:.0} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    // Association 0: spurious failover; 37: failovers; 49: ABORT; 9999: the short one.
    let rows = measure(&app, &id, &every_path(&id, &[0, 37, 49, 9999])).await;
    eprintln!("{:<75} {:>10} {:>9}", "path", "bytes", "ms");
    for (p, n, ms) in &rows {
        eprintln!("{p:<75} {n:>10} {ms:>9.1}");
    }
    let over: Vec<_> = rows.iter().filter(|r| r.1 >= MB).collect();
    assert!(over.is_empty(), "over 1 MB: {over:?}");
}

/// The `data-id` of every row of the capture page's association table.
fn row_ids(html: &str) -> Vec<u64> {
    let table = pages_common::element(html, "id=\"associations\"", "</table>");
    table
        .split("<tr data-id=\"")
        .skip(1)
        .map(|r| r[..r.find('"').unwrap()].parse().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn association_list_pages_sorts_and_filters_on_the_server() {
    use pages_common::{get_json, unescape};
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, _) = analysed(&app, "many.pcap", &many::many_associations(300)).await;
    let failovers = many::SPURIOUS_COPIES + many::FAILOVER_COPIES;

    // First page: 50 rows, the counts, a pager to the next page.
    let (s, html) = get(&app, &format!("/captures/{id}")).await;
    assert!(s.is_success());
    let html = unescape(&html);
    assert_eq!(row_ids(&html), (0..50).collect::<Vec<u64>>());
    let count = pages_common::element(&html, "id=\"associations-count\"", "</p>");
    assert!(
        count.contains(&format!(
            "showing 1–50 of 300 associations, {failovers} with failovers ({} with spurious \
             failovers), 0 with stalls, {} aborted",
            many::SPURIOUS_COPIES,
            many::ABORT_COPIES
        )),
        "{count}"
    );
    assert!(html.contains("page 1 of 6"), "no pager");
    assert!(html.contains(&format!(
        "href=\"/captures/{id}?offset=50#associations\" class=\"pager-next\""
    )));
    // Every filter is a plain GET form (works without JS); the headers are sort links.
    assert!(html.contains("<form class=\"list-filter\" id=\"association-filter\" method=\"get\""));
    assert!(html.contains(&format!(
        "href=\"/captures/{id}?sort=packets&order=desc#associations\""
    )));

    // Next page, and the last one (a short one).
    let (_, html) = get(&app, &format!("/captures/{id}?offset=50")).await;
    assert_eq!(row_ids(&html), (50..100).collect::<Vec<u64>>());
    let (_, html) = get(&app, &format!("/captures/{id}?offset=280&limit=25")).await;
    assert_eq!(row_ids(&html), (280..300).collect::<Vec<u64>>());
    assert!(unescape(&html).contains("showing 281–300 of 300 associations"));

    // Sorted on the server: by packets, most first; the arrow and aria-sort on the column.
    let (_, html) = get(&app, &format!("/captures/{id}?sort=packets&order=desc")).await;
    assert!(html.contains("aria-sort=\"descending\""));
    let api = get_json(
        &app,
        &format!("/api/captures/{id}/associations?sort=packets&order=desc&limit=all"),
    )
    .await;
    let rows = api["associations"].as_array().unwrap();
    assert_eq!(rows.len(), 300);
    let packets: Vec<u64> = rows
        .iter()
        .map(|r| r["packets"].as_u64().unwrap())
        .collect();
    assert!(packets.windows(2).all(|w| w[0] >= w[1]), "{packets:?}");
    let first: Vec<u64> = rows
        .iter()
        .take(50)
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(row_ids(&html), first);

    // Filters: failovers, spurious, ABORT, end kind, port, address, upper layer, text.
    let (_, html) = get(&app, &format!("/captures/{id}?failover=1")).await;
    let ids = row_ids(&html);
    assert_eq!(ids.len(), failovers);
    assert!(unescape(&html).contains(&format!(
        "showing 1–{failovers} of {failovers} associations that match (of 300 in the capture)"
    )));
    assert!(html.contains("name=\"failover\" value=\"1\" checked"));
    let n = |v: &serde_json::Value| v["counts"]["matching"].as_u64().unwrap() as usize;
    let api = |q: &str| {
        let uri = format!("/api/captures/{id}/associations?{q}");
        let app = app.clone();
        async move { get_json(&app, &uri).await }
    };
    assert_eq!(n(&api("spurious=1").await), many::SPURIOUS_COPIES);
    let ab = api("abort=1&limit=all").await;
    assert_eq!(n(&ab), many::ABORT_COPIES);
    assert!(ab["associations"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["end_kind"] == "abort" && r["aborted"] == true));
    assert_eq!(n(&api("end=abort").await), many::ABORT_COPIES);
    assert_eq!(n(&api("end=shutdown").await), 300 - many::ABORT_COPIES);
    assert_eq!(n(&api("stall=1").await), 0);
    assert_eq!(n(&api("failover=1&spurious=1&abort=1").await), 0);
    // Copy k of each part has the ports 5001 + k / 5002 + k: 5001 is copy 0 of four parts
    // and copy 1 of the three that share it as the higher port.
    let p = api("port=5001&limit=all").await;
    assert!(n(&p) >= 4);
    assert!(p["associations"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["ports"].as_array().unwrap().contains(&5001.into())));
    assert_eq!(n(&api("addr=10.201.").await), 300);
    let a = api("addr=10.201.2.1&limit=all").await;
    assert!(n(&a) > 250);
    assert!(a["associations"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["addresses"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|x| x.as_array().unwrap())
            .any(|x| x == "10.201.2.1")));
    assert_eq!(n(&api("addr=192.0.2.1").await), 0);
    // Ports shifted to 5060 / 5061 read as SIP (the analyzer's port evidence).
    let sip = n(&api("upper=sip").await);
    assert!(sip > 0);
    assert_eq!(n(&api("upper=none").await), 300 - sip);
    assert_eq!(n(&api("q=%2337%20aborted").await), 0);
    assert_eq!(n(&api("q=%23299").await), 1);
    // The list API sends summaries, not reports.
    let row = &api("limit=1").await["associations"][0];
    assert!(
        row.get("directions").is_none() && row["failovers"].is_u64(),
        "{row}"
    );
    // Bad parameters are 400, an empty one (an HTML form's) is none.
    let (s, _) = get(&app, &format!("/captures/{id}?sort=bogus")).await;
    assert_eq!(s.as_u16(), 400);
    let (s, _) = get(&app, &format!("/captures/{id}?port=x")).await;
    assert_eq!(s.as_u16(), 400);
    let (_, html) = get(&app, &format!("/captures/{id}?q=&addr=&port=&upper=&end=")).await;
    assert_eq!(row_ids(&html).len(), 50);
    let (_, html) = get(&app, &format!("/captures/{id}?q=nothing-like-this")).await;
    assert!(html.contains("id=\"associations-none\""));

    // API: captures list and capture paginate (?offset=&limit=) with totals.
    let l = get_json(&app, "/api/captures?limit=1").await;
    assert_eq!(l["total"], 1);
    assert_eq!(l["captures"].as_array().unwrap().len(), 1);
    assert_eq!(
        get_json(&app, "/api/captures?offset=1").await["captures"],
        serde_json::json!([])
    );
    let c = get_json(&app, &format!("/api/captures/{id}")).await;
    assert_eq!(c["status"], "done");
    assert_eq!(c["page"]["total"]["associations"], 300);
    let got = c["result"]["associations"].as_array().unwrap().len();
    assert_eq!(c["page"]["returned"]["associations"], got);
    assert!((1..=50).contains(&got), "{got}");
    assert_eq!(c["page"]["next_offset"], got);
    assert_eq!(c["result"]["associations"][0]["id"], 0);
    assert!(
        c["result"]["association_ends"].is_object(),
        "the rest of the report is there"
    );
    let c = get_json(&app, &format!("/api/captures/{id}?offset=290&limit=50")).await;
    assert_eq!(c["result"]["associations"].as_array().unwrap().len(), 10);
    assert_eq!(c["result"]["associations"][0]["id"], 290);
    assert!(c["page"]["next_offset"].is_null());
    assert_eq!(c["result"]["comparison"].as_array().unwrap().len(), 10);
    let c = get_json(&app, &format!("/api/captures/{id}?limit=all")).await;
    assert_eq!(c["result"]["associations"].as_array().unwrap().len(), 300);
    assert!(c.get("page").is_none(), "the whole report as before");
    let c = get_json(&app, &format!("/api/captures/{id}?limit=0")).await;
    assert_eq!(c["result"]["associations"], serde_json::json!([]));

    // Compare page: the top N directions by the chosen metric, with the selector.
    let (_, html) = get(&app, &format!("/captures/{id}/compare")).await;
    let table = pages_common::element(&html, "id=\"comparison\"", "</thead>");
    assert_eq!(table.matches("<th class=\"sctp\">").count(), 10, "{table}");
    assert!(unescape(&html)
        .contains("Showing the 10 of 300 directions with the highest throughput (bit/s)."));
    let (_, html) = get(
        &app,
        &format!("/captures/{id}/compare?metric=retransmissions&top=5"),
    )
    .await;
    let table = pages_common::element(&html, "id=\"comparison\"", "</thead>");
    assert_eq!(table.matches("<th class=\"sctp\">").count(), 5);
    assert!(html.contains("<option value=\"retransmissions\" selected>"));
    let (s, _) = get(&app, &format!("/captures/{id}/compare?metric=bogus")).await;
    assert_eq!(s.as_u16(), 400);

    // Association page: the three identical spurious failovers of association 0 grouped.
    let (_, html) = get(&app, &format!("/captures/{id}/associations/0")).await;
    let html = unescape(&html);
    let group = pages_common::element(&html, "class=\"failover-group\"", "</p>");
    assert!(
        group.contains("data-count=\"3\"")
            && group.contains("3 spurious failovers of DATA sender 0, same cause: the peer's SACK delay exceeds this sender's RTO"),
        "{group}"
    );
    assert!(
        html.contains("<details class=\"group-rest\"><summary>show all 3 (the other 2)</summary>")
    );
    assert_eq!(
        html.matches("class=\"finding failover-card spurious\"")
            .count(),
        3
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_timeout_tables_are_collapsed_behind_their_summary() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let bytes = std::fs::read(many::sample_traces().join("pmtu_p20_sender.pcap")).unwrap();
    let (id, v) = analysed(&app, "pmtu.pcap", &bytes).await;
    let n = v["result"]["associations"][0]["directions"][0]["timeouts"]
        .as_array()
        .unwrap()
        .len();
    assert!(n > 20, "{n}");
    let (_, html) = get(&app, &format!("/captures/{id}/associations/0")).await;
    let details = pages_common::element(&html, "id=\"timeouts-0\"", "</summary>");
    assert!(
        details.contains(&format!("{n} T3-rtx timeouts from ")),
        "{details}"
    );
    assert!(details.contains("— show the table"));
}
