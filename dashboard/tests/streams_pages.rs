//! Streams, upper layer, SCTP stacks and failover policy through the whole router: the
//! association page's Streams section, endpoint stacks and direction facts on a sample trace
//! (PPID 0 on stream 0, usrsctp on both sides), and the public open5gs NGAP capture
//! (`../shared`, skipped when absent): "NGAP" as upper layer on every page and the Linux stack.

use std::path::Path;

use axum::http::StatusCode;

use crate::pages_common;

use pages_common::{analysed, element, get, open, public_capture, unescape};

/// The sample trace: one stream of PPID 0 each way, usrsctp stacks, the negotiated streams, the
/// failover policy in the direction facts, and the upper-layer column of the lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_and_stacks_of_a_sample_trace() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces/cut_p20_sack40_sender.pcap");
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed(&app, "cut.pcap", &bytes).await;
    let a = &v["result"]["associations"][0];
    let d = &a["directions"][0];
    let s0 = &d["streams"][0];
    assert_eq!(s0["stream"], 0, "{d}");
    assert_eq!(s0["ppids"][0]["ppid"], 0);

    let (s, html) = get(&app, &format!("/captures/{id}/associations/0")).await;
    assert_eq!(s, StatusCode::OK);
    let text = unescape(&html);
    let sender = d["sender"].as_u64().unwrap();
    let table = element(&text, &format!("id=\"streams-{sender}\""), "</table>");
    assert_eq!(
        table.matches("<tr class=\"stream\">").count(),
        d["streams"].as_array().unwrap().len().min(50)
    );
    assert!(
        table.contains(&format!(
            "<tr class=\"stream\"><td class=\"num\">0</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            s0["messages"], s0["bytes"]
        )),
        "{table}"
    );
    assert!(table.contains("PPID 0 (not specified)"), "{table}");
    assert!(table.contains("100%"), "{table}");
    let neg = element(&text, "id=\"streams-negotiated\"", "</table>");
    let n0 = &a["streams_negotiated"][0];
    assert!(
        neg.contains(&format!(
            "<td class=\"num\">{}</td><td class=\"num\">{}</td>",
            n0["os"], n0["mis"]
        )),
        "{neg}"
    );
    let upper = element(&text, "id=\"upper-layer\"", "</p>");
    assert!(upper.contains("unknown"), "{upper}");
    assert!(
        upper.contains(a["upper_layer"]["evidence"].as_str().unwrap()),
        "{upper}"
    );
    let eps = element(&text, "id=\"endpoints\"", "</table>");
    assert_eq!(eps.matches("data-stack=\"usrsctp\"").count(), 2, "{eps}");
    assert!(eps.contains("usrsctp (FreeBSD / usrsctp / older WebRTC) (high confidence)"));
    assert!(eps.contains("title=\"INIT parameters in usrsctp"), "{eps}");
    let facts = element(&text, &format!("id=\"direction-{sender}\""), "</section>");
    assert!(
        facts.contains("href=\"/help#fig-failover_policy\"")
            && facts.contains(">failover policy</a></dt>"),
        "{facts}"
    );
    if d["failover_policy"].is_null() {
        assert!(facts.contains("unknown (no failover shows it)"), "{facts}");
    }

    let (_, html) = get(&app, &format!("/captures/{id}")).await;
    let table = element(&html, "id=\"associations\"", "</table>");
    assert!(
        table.contains("data-sort=\"upper layer\">upper layer</a>"),
        "{table}"
    );
    assert!(
        table.contains("<td class=\"upper-layer\">—</td>"),
        "{table}"
    );
    let (_, html) = get(&app, "/").await;
    assert!(element(&html, "id=\"captures\"", "</table>").contains(">upper layer</a></th>"));
}

/// The public open5gs capture (NGAP between a gNB and the AMF), when present: "NGAP" as upper
/// layer on the captures list, the capture page and the association page; Linux stacks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_ngap_capture() {
    let name = "Spartan-F117__VAPT_CoreNetwork5G__NAS_UE_Auth_open5gs.pcapng";
    let Some(bytes) = public_capture(name) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed(&app, name, &bytes).await;
    let a = &v["result"]["associations"][0];
    assert_eq!(a["upper_layer"]["name"], "NGAP", "{}", a["upper_layer"]);

    let (_, html) = get(&app, "/").await;
    let row = element(&html, &format!("data-id=\"{id}\""), "</tr>");
    assert!(row.contains("<td class=\"upper-layer\">NGAP</td>"), "{row}");
    let (_, html) = get(&app, &format!("/captures/{id}")).await;
    assert!(html.contains(">upper layer</a></dt><dd>NGAP</dd>"));
    assert!(element(&html, "id=\"associations\"", "</table>")
        .contains("<td class=\"upper-layer\">NGAP</td>"));
    let (_, html) = get(&app, &format!("/captures/{id}/associations/{}", a["id"])).await;
    let text = unescape(&html);
    let upper = element(&text, "id=\"upper-layer\"", "</p>");
    assert!(upper.contains("data-name=\"NGAP\""), "{upper}");
    assert!(upper.contains("NGAP (PPID 60)"), "{upper}");
    let eps = element(&text, "id=\"endpoints\"", "</table>");
    assert!(eps.contains("data-stack=\"linux\""), "{eps}");
    assert!(eps.contains("Linux kernel SCTP"), "{eps}");
    assert!(text.contains("NGAP (PPID 60)"));
}
