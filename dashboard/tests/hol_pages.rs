//! Head-of-line blocking on the association page (issue 15 section 2), through the whole router:
//! the "Head-of-line blocking" block of a direction and the "HOL blocked" column of its streams
//! table, on the lab's multistream loss run at the receiver (4 ordered streams, 2% loss: 34
//! messages waited, 12 / 4 / 12 / 6 per stream, 171 on one stream) and on a one-stream capture
//! where nothing waited (`cut_p20_sack40_sender`).

use axum::http::StatusCode;

use crate::pages_common;

use pages_common::{analysed_sample, element, get, open, unescape};

/// The stream rows' "HOL blocked" cells of a streams table, in row order.
fn hol_cells(table: &str) -> Vec<String> {
    table
        .split("<td class=\"num hol-cell")
        .skip(1)
        .map(|c| {
            let c = &c[c.find('>').unwrap() + 1..];
            c[..c.find("</td>").unwrap()].to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hol_blocking_of_the_multistream_loss_run_at_the_receiver() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed_sample(&app, "hol_s4_loss2_receiver.pcap").await;
    let d = &v["result"]["associations"][0]["directions"][0];
    assert_eq!(d["hol"]["blocked_messages"], 34, "{}", d["hol"]);
    let sender = d["sender"].as_u64().unwrap();

    let (s, html) = get(&app, &format!("/captures/{id}/associations/0")).await;
    assert_eq!(s, StatusCode::OK);
    let text = unescape(&html);
    let block = element(&text, &format!("id=\"hol-{sender}\""), "</div>");
    assert!(block.contains("data-state=\"blocked\""), "{block}");
    assert!(block.contains("data-blocked=\"34\""), "{block}");
    assert!(block.contains("data-single-stream=\"171\""), "{block}");
    assert!(
        block.contains("Head-of-line blocking <span class=\"hol-clock\">(from DATA arrivals at the receiver)</span>"),
        "{block}"
    );
    assert!(
        block.contains(
            "34 of 801 ordered messages waited for an earlier message of their stream: \
             max 37.9 ms, p95 35.4 ms, total 865 ms."
        ),
        "{block}"
    );
    assert!(
        block.contains(
            "On one stream (as TCP delivers): 171 messages would have waited, max 52.9 ms, \
             p95 50.3 ms, total 4752 ms. Its 4 streams saved 3887 ms of waiting."
        ),
        "{block}"
    );
    assert!(
        block.contains("Evidence: times of DATA arrivals in the capture (receiver vantage)."),
        "{block}"
    );
    // Inside the direction's panel.
    let panel = element(&text, &format!("id=\"direction-{sender}\""), "</section>");
    assert!(panel.contains(&format!("id=\"hol-{sender}\"")), "{panel}");

    let table = element(&text, &format!("id=\"streams-{sender}\""), "</table>");
    assert!(
        table.contains("href=\"/help#fig-hol_blocked\"")
            && table.contains(">HOL blocked (max ms)</a>"),
        "{table}"
    );
    assert_eq!(
        hol_cells(table),
        ["12 (37.9)", "4 (35.4)", "12 (35.4)", "6 (35.3)"],
        "{table}"
    );
    let per_stream: Vec<u64> = d["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["hol_blocked_messages"].as_u64().unwrap())
        .collect();
    assert_eq!(per_stream, [12, 4, 12, 6]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_hol_blocking_on_one_stream_at_the_sender() {
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed_sample(&app, "cut_p20_sack40_sender.pcap").await;
    let d = &v["result"]["associations"][0]["directions"][0];
    let sender = d["sender"].as_u64().unwrap();
    let ordered = &d["hol"]["ordered_messages"];
    assert_eq!(d["hol"]["blocked_messages"], 0, "{}", d["hol"]);

    let (_, html) = get(&app, &format!("/captures/{id}/associations/0")).await;
    let text = unescape(&html);
    let block = element(&text, &format!("id=\"hol-{sender}\""), "</div>");
    assert!(block.contains("data-state=\"none_blocked\""), "{block}");
    assert!(
        block.contains("(from SACKs at the sender, late by the SACK's path delay)"),
        "{block}"
    );
    assert!(
        block.contains(&format!(
            "No message waited for an earlier one of its stream ({ordered} ordered messages)."
        )),
        "{block}"
    );
    assert!(
        block.contains(
            "On one stream (as TCP delivers): no message would have waited either. Every \
             message is already on one stream: the same figures."
        ),
        "{block}"
    );
    let table = element(&text, &format!("id=\"streams-{sender}\""), "</table>");
    assert_eq!(hol_cells(table), ["0"], "{table}");
}
