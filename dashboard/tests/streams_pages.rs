//! Streams, upper layer, SCTP stacks and failover policy through the whole router: the
//! association page's Streams section, endpoint stacks and direction facts on a sample trace
//! (PPID 0 on stream 0, usrsctp on both sides), and the public open5gs NGAP capture
//! (`../shared`, skipped when absent): "NGAP" as upper layer on every page and the Linux stack.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use dashboard::{app, AppState, Config};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

const BOUNDARY: &str = "----streams-test-boundary-7a1e";

async fn send(app: &Router, req: Request<Body>) -> (StatusCode, String) {
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

async fn get(app: &Router, uri: &str) -> (StatusCode, String) {
    let req = Request::get(uri)
        .header(header::ACCEPT, "text/html")
        .body(Body::empty())
        .unwrap();
    send(app, req).await
}

async fn get_json(app: &Router, uri: &str) -> Value {
    let req = Request::get(uri)
        .header(header::ACCEPT, "application/json")
        .body(Body::empty())
        .unwrap();
    let (s, b) = send(app, req).await;
    assert_eq!(s, StatusCode::OK, "{uri}: {b}");
    serde_json::from_str(&b).expect("json")
}

/// Uploads `bytes` as `name` and waits for the analysis: (id, the API answer).
async fn analysed(app: &Router, name: &str, bytes: &[u8]) -> (String, Value) {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    let req = Request::post("/api/captures")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header(header::ACCEPT, "application/json")
        .body(Body::from(body))
        .unwrap();
    let (s, b) = send(app, req).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{b}");
    let v: Value = serde_json::from_str(&b).unwrap();
    let id = v["captures"][0]["id"].as_str().unwrap().to_string();
    let start = Instant::now();
    loop {
        let v = get_json(app, &format!("/api/captures/{id}")).await;
        match v["status"].as_str() {
            Some("done") => return (id, v),
            Some("failed") => panic!("analysis failed: {v}"),
            _ => {}
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "analysis too slow"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn open(dir: &Path) -> Router {
    app(AppState::open(Config::new(dir)).expect("open state"))
}

/// Undoes askama's HTML escaping for text comparisons.
fn unescape(html: &str) -> String {
    html.replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#38;", "&")
}

/// The element starting at the first `marker` up to the next `end`.
fn element<'a>(html: &'a str, marker: &str, end: &str) -> &'a str {
    let at = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} not in the page"));
    let rest = &html[at..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

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
    assert!(facts.contains("<dt>failover policy</dt>"), "{facts}");
    if d["failover_policy"].is_null() {
        assert!(facts.contains("unknown (no failover shows it)"), "{facts}");
    }

    let (_, html) = get(&app, &format!("/captures/{id}")).await;
    let table = element(&html, "id=\"associations\"", "</table>");
    assert!(table.contains("<th>upper layer</th>"));
    assert!(
        table.contains("<td class=\"upper-layer\">—</td>"),
        "{table}"
    );
    let (_, html) = get(&app, "/").await;
    assert!(element(&html, "id=\"captures\"", "</table>").contains("<th>upper layer</th>"));
}

/// The public open5gs capture (NGAP between a gNB and the AMF), when present: "NGAP" as upper
/// layer on the captures list, the capture page and the association page; Linux stacks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_ngap_capture() {
    let name = "Spartan-F117__VAPT_CoreNetwork5G__NAS_UE_Auth_open5gs.pcapng";
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(path) = [
        here.join("../../shared/captures/public").join(name),
        PathBuf::from("/work/shared/captures/public").join(name),
    ]
    .into_iter()
    .find(|p| p.is_file()) else {
        eprintln!("skipped: {name} not found");
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = open(dir.path());
    let (id, v) = analysed(&app, name, &bytes).await;
    let a = &v["result"]["associations"][0];
    assert_eq!(a["upper_layer"]["name"], "NGAP", "{}", a["upper_layer"]);

    let (_, html) = get(&app, "/").await;
    let row = element(&html, &format!("data-id=\"{id}\""), "</tr>");
    assert!(row.contains("<td class=\"upper-layer\">NGAP</td>"), "{row}");
    let (_, html) = get(&app, &format!("/captures/{id}")).await;
    assert!(html.contains("<dt>upper layer</dt><dd>NGAP</dd>"));
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
