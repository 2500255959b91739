//! Route tests: the whole router (`dashboard::app`) driven with `tower::ServiceExt::oneshot` over a
//! temp data dir — upload, analysis, pages, API JSON equal to the CLI's report, limits, errors,
//! restart and delete.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use analyzer::analyze::{analyze_file, Options};
use analyzer::report::CaptureReport;
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use dashboard::{app, AppState, Config};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

const BOUNDARY: &str = "----dashboard-test-boundary-7d1f";

/// A lab capture from `../shared` (beside the project), if present.
fn lab(name: &str) -> Option<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        here.join("../../shared/captures/lab").join(name),
        PathBuf::from("/work/shared/captures/lab").join(name),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

macro_rules! need {
    ($name:expr) => {
        match lab($name) {
            Some(p) => p,
            None => {
                eprintln!("skipped: lab capture {} not found", $name);
                return;
            }
        }
    };
}

fn multipart(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, bytes) in files {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

async fn send(app: &Router, req: Request<Body>) -> (StatusCode, String) {
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

async fn get(app: &Router, uri: &str, accept: &str) -> (StatusCode, String) {
    let req = Request::get(uri)
        .header(header::ACCEPT, accept)
        .body(Body::empty())
        .unwrap();
    send(app, req).await
}

async fn get_json(app: &Router, uri: &str) -> (StatusCode, Value) {
    let (s, b) = get(app, uri, "application/json").await;
    (s, serde_json::from_str(&b).unwrap_or(Value::Null))
}

async fn upload(app: &Router, files: &[(&str, &[u8])]) -> (StatusCode, Value) {
    let req = Request::post("/api/captures")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header(header::ACCEPT, "application/json")
        .body(Body::from(multipart(files)))
        .unwrap();
    let (s, b) = send(app, req).await;
    (s, serde_json::from_str(&b).unwrap_or(Value::String(b)))
}

/// Uploads one file and waits for its analysis: its id and the finished entry.
async fn upload_done(app: &Router, name: &str, bytes: &[u8]) -> (String, Value) {
    let (s, v) = upload(app, &[(name, bytes)]).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    let id = v["captures"][0]["id"].as_str().unwrap().to_string();
    let done = wait_done(app, &id).await;
    (id, done)
}

/// Polls `GET /api/captures/{id}` until the analysis is done (or failed).
async fn wait_done(app: &Router, id: &str) -> Value {
    let start = Instant::now();
    loop {
        let (s, v) = get_json(app, &format!("/api/captures/{id}")).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        // Done once the summary is published and the tables written (they follow it).
        match (v["status"].as_str(), v["tables"]["status"].as_str()) {
            (Some("done"), Some("pending")) => {}
            (Some("done") | Some("failed"), _) => return v,
            (Some("queued") | Some("running"), _) => {}
            other => panic!("bad status {other:?}: {v}"),
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "analysis too slow"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn state(dir: &Path, max_upload: Option<u64>) -> AppState {
    let mut c = Config::new(dir);
    if let Some(m) = max_upload {
        c.max_upload = m;
    }
    AppState::open(c).expect("open state")
}

/// The CLI's report for `path`, under the name the upload gave it.
fn expected_report(path: &Path, name: &str) -> Value {
    let a = analyze_file(path, &Options::default(), &mut |_| {}).expect("analyse");
    let mut r = CaptureReport::from_analysis(&a);
    r.file = name.to_string();
    serde_json::to_value(r).unwrap()
}

/// Undoes askama's HTML escaping (numeric entities) for text comparisons.
fn unescape(html: &str) -> String {
    html.replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#38;", "&")
}

/// The first JSON path where `a` and `b` differ, with both values.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let (p, q) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                if let Some(d) = first_difference(p, q, &format!("{at}.{k}")) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {a} != {b}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_analyse_pages_restart_delete() {
    let path = need!("p20_sack40_sender.pcap");
    let name = "p20_sack40_sender.pcap";
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = app(state(dir.path(), None));

    let (s, v) = upload(&app, &[(name, &bytes)]).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    // Running when the summary pass started while the upload arrived (a free slot), else queued.
    let st = v["captures"][0]["status"].as_str().unwrap();
    assert!(st == "running" || st == "queued", "{v}");
    let id = v["captures"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 64);

    let done = wait_done(&app, &id).await;
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["error"], Value::Null);
    assert_eq!(done["name"], name);
    let expected = expected_report(&path, name);
    assert_eq!(
        first_difference(&done["result"], &expected, "result"),
        None,
        "API result differs from the CLI report"
    );

    // Listing.
    let (s, list) = get_json(&app, "/api/captures").await;
    assert_eq!(s, StatusCode::OK);
    let caps = list["captures"].as_array().unwrap();
    assert_eq!(caps.len(), 1);
    assert_eq!(caps[0]["id"], id.as_str());
    assert_eq!(caps[0]["summary"]["failovers"], 1);
    let (s, html) = get(&app, "/", "text/html").await;
    assert_eq!(s, StatusCode::OK);
    assert!(html.contains(name) && html.contains(&format!("/captures/{id}")));

    // Capture and association pages: the failover row with its failover time as the JSON has it.
    let (s, html) = get(&app, &format!("/captures/{id}"), "text/html").await;
    assert_eq!(s, StatusCode::OK);
    assert!(html.contains("SCTP associations") && html.contains("/associations/0"));
    let f = &expected["associations"][0]["directions"][0]["failovers"][0];
    let failover_ms = serde_json::to_string(&f["failover_ms"]).unwrap();
    let (s, html) = get(&app, &format!("/captures/{id}/associations/0"), "text/html").await;
    assert_eq!(s, StatusCode::OK);
    let row = html
        .split("<tr class=\"failover")
        .nth(1)
        .expect("failover row")
        .split("</tr>")
        .next()
        .unwrap();
    assert!(row.contains(&failover_ms), "{failover_ms} not in {row}");
    assert!(row.contains(f["from"].as_str().unwrap()));
    assert!(unescape(&html).contains(f["filter"].as_str().unwrap()));
    let (s, html) = get(&app, &format!("/captures/{id}/compare"), "text/html").await;
    assert_eq!(s, StatusCode::OK);
    assert!(html.contains("SCTP #0 sender 0"));

    // Charts and tables.
    let (s, c) = get_json(
        &app,
        &format!("/api/captures/{id}/associations/0/charts/tsn?from=4&to=6&width=300"),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["range"][0], 4.0);
    assert!(c["x"].as_array().unwrap().len() > 10);
    for k in ["rtt", "sack_delay", "throughput", "timeline"] {
        let (s, c) = get_json(
            &app,
            &format!("/api/captures/{id}/associations/0/charts/{k}"),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{k}: {c}");
        assert!(c["series"].is_array(), "{k}");
    }
    let (s, c) = get_json(
        &app,
        &format!("/api/captures/{id}/compare/charts/throughput"),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let (s, csv) = get(&app, &format!("/captures/{id}/tables/failovers.csv"), "*/*").await;
    assert_eq!(s, StatusCode::OK);
    assert!(csv.starts_with("capture,assoc,sender,time_s"), "{csv}");
    assert!(csv.contains(&failover_ms));
    let (s, pq) = get(
        &app,
        &format!("/captures/{id}/tables/chunks.parquet"),
        "*/*",
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(pq.starts_with("PAR1"));
    let (s, _) = get(&app, &format!("/captures/{id}/tables/nope.csv"), "*/*").await;
    assert_eq!(s, StatusCode::NOT_FOUND);

    // The same file again reuses the result.
    let (s, v) = upload(&app, &[("again.pcap", &bytes)]).await;
    assert_eq!(s, StatusCode::ACCEPTED);
    assert_eq!(v["captures"][0]["id"], id.as_str());
    assert_eq!(v["captures"][0]["status"], "done");
    assert_eq!(v["captures"][0]["reused"], true);

    // Restart: a new state over the same data dir has the result at once.
    let app2 = dashboard::app(state(dir.path(), None));
    let (s, v) = get_json(&app2, &format!("/api/captures/{id}")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["status"], "done");
    assert_eq!(first_difference(&v["result"], &expected, "result"), None);

    // Delete.
    let req = Request::delete(format!("/api/captures/{id}"))
        .body(Body::empty())
        .unwrap();
    let (s, _) = send(&app2, req).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = get_json(&app2, &format!("/api/captures/{id}")).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(!dir.path().join("captures").join(&id).exists());
    let req = Request::delete(format!("/api/captures/{id}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app2, req).await.0, StatusCode::NOT_FOUND);
}

/// A zstd-compressed capture uploaded from the browser is analysed as its plain bytes are, and
/// its page says how it was compressed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zstd_compressed_upload_analyses_as_its_plain_capture() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces/cut_p20_sack40_sender.pcap");
    let name = "cut_p20_sack40_sender.pcap.zst";
    let bytes = zstd::encode_all(&std::fs::read(&path).unwrap()[..], 3).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = app(state(dir.path(), None));
    let (id, done) = upload_done(&app, name, &bytes).await;
    assert_eq!(done["status"], "done", "{done}");
    let mut expected = expected_report(&path, name);
    expected["compression"] = "zstd".into();
    assert_eq!(
        first_difference(&done["result"], &expected, "result"),
        None,
        "the compressed upload's result differs from the plain capture's report"
    );
    let (s, html) = get(&app, &format!("/captures/{id}"), "text/html").await;
    assert_eq!(s, StatusCode::OK);
    assert!(unescape(&html).contains("pcap (zstd)"), "{html}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_files_in_one_upload() {
    let a = need!("p20_sack40_sender.pcap");
    let b = need!("twoassoc_p20_cut5_sender.pcap");
    let (ba, bb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let app = app(state(dir.path(), None));
    let (s, v) = upload(&app, &[("a.pcap", &ba), ("b.pcap", &bb)]).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    let caps = v["captures"].as_array().unwrap();
    assert_eq!(caps.len(), 2);
    for c in caps {
        let done = wait_done(&app, c["id"].as_str().unwrap()).await;
        assert_eq!(done["status"], "done");
    }
    let (_, list) = get_json(&app, "/api/captures").await;
    assert_eq!(list["captures"].as_array().unwrap().len(), 2);
    let id_b = caps[1]["id"].as_str().unwrap();
    let (s, html) = get(
        &app,
        &format!("/captures/{id_b}/associations/1"),
        "text/html",
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(html.contains("Association 1"));
}

#[tokio::test]
async fn oversize_upload_is_413() {
    let path = need!("p20_sack40_sender.pcap");
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = app(state(dir.path(), Some(10_000)));
    let (s, v) = upload(&app, &[("big.pcap", &bytes)]).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{v}");
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains("too large") && msg.contains("10000"), "{msg}");
    // Nothing stored, no temp file left.
    assert_eq!(
        get_json(&app, "/api/captures").await.1["captures"],
        Value::Array(vec![])
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
        0
    );
}

#[tokio::test]
async fn non_capture_is_422_with_the_analyzer_error() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(state(dir.path(), None));
    let (s, v) = upload(&app, &[("notes.txt", b"hello, this is not a capture")]).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains("notes.txt"), "{msg}");
    assert!(
        msg.contains("bad magic") && msg.contains("offset 0"),
        "{msg}"
    );
    // A truncated pcap header names its offset too.
    let (s, v) = upload(&app, &[("short.pcap", &[0xd4, 0xc3, 0xb2, 0xa1, 2, 0])]).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(v["error"].as_str().unwrap().contains("offset"), "{v}");
    // No file part at all.
    let req = Request::post("/api/captures")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(Body::from(format!("--{BOUNDARY}--\r\n")))
        .unwrap();
    assert_eq!(send(&app, req).await.0, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn unknown_ids_are_404() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(state(dir.path(), None));
    let unknown = "0".repeat(64);
    for uri in [
        format!("/api/captures/{unknown}"),
        "/api/captures/../../etc/passwd".to_string(),
        format!("/api/captures/{unknown}/associations/0/charts/tsn"),
        format!("/captures/{unknown}/tables/chunks.csv"),
    ] {
        let (s, v) = get_json(&app, &uri).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{uri}");
        assert!(v["error"].as_str().is_some(), "{uri}: {v}");
    }
    // Pages answer HTML errors to browsers.
    let (s, html) = get(&app, &format!("/captures/{unknown}"), "text/html").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(
        html.contains("<html") && html.contains("not found"),
        "{html}"
    );
    let (s, _) = get(&app, "/no/such/page", "text/html").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let req = Request::delete(format!("/api/captures/{unknown}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, req).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn token_protects_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Config::new(dir.path());
    c.token = Some("s3cret".into());
    let app = app(AppState::open(c).unwrap());
    assert_eq!(
        get(&app, "/api/captures", "*/*").await.0,
        StatusCode::UNAUTHORIZED
    );
    let req = Request::get("/api/captures")
        .header(header::AUTHORIZATION, "Bearer s3cret")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, req).await.0, StatusCode::OK);
    let resp = app
        .clone()
        .oneshot(Request::get("/?token=s3cret").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let cookie = resp.headers()[header::SET_COOKIE].to_str().unwrap();
    assert!(cookie.starts_with("sctp_dashboard_token=s3cret"));
    let req = Request::get("/")
        .header(header::COOKIE, "sctp_dashboard_token=s3cret")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, req).await.0, StatusCode::OK);
}

/// The spurious-failover sample trace: the association page shows the diagnosis with its cause
/// and recommendation, as the CLI JSON has them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spurious_failover_diagnosis_is_shown() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-traces/spur_pmr1_rtomin30_sender.pcap");
    let name = "spur_pmr1_rtomin30_sender.pcap";
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let app = app(state(dir.path(), None));
    let (id, done) = upload_done(&app, name, &bytes).await;
    let fo = &done["result"]["associations"][0]["directions"][0]["failovers"][0];
    assert_eq!(fo["spurious"], true, "{fo}");
    assert_eq!(fo["cause"], "sack_delay_exceeds_rto");
    let rec = fo["recommendation"].as_str().unwrap();
    let (s, html) = get(&app, &format!("/captures/{id}/associations/0"), "text/html").await;
    assert_eq!(s, StatusCode::OK);
    let text = unescape(&html);
    // The cause in words, not its identifier.
    assert!(
        text.contains("the peer's SACK delay exceeds this sender's RTO"),
        "cause missing"
    );
    assert!(!text.contains("<p><strong>Cause:</strong> sack_delay_exceeds_rto"));
    assert!(text.contains(rec), "recommendation missing");
    assert!(
        text.contains("sctp.data_tsn_raw") || text.contains("frame.number"),
        "filter missing"
    );
}

/// A report past `Config::result_budget` is paged whatever its number of associations, and an
/// association alone past it is skipped, named in `page.skipped` and `page.note`, and paging
/// goes on after it; with a `limit` the client gets what it asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_association_past_the_result_budget_is_named_not_sent() {
    let bytes = crate::pages_common::many::many_associations(100);
    let dir = tempfile::tempdir().unwrap();
    let mut c = Config::new(dir.path());
    c.result_budget = 64;
    let app = app(AppState::open(c).expect("open state"));
    let (s, v) = upload(&app, &[("hundred.pcap", &bytes)]).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    let id = v["captures"][0]["id"].as_str().unwrap().to_string();
    let done = wait_done(&app, &id).await;
    assert_eq!(done["status"], "done", "{done}");
    // The whole report is past 64 bytes: paged, and the first association alone is too.
    let page = &done["page"];
    assert_eq!(page["returned"]["associations"], 0, "{page}");
    assert_eq!(page["skipped"], serde_json::json!([0]), "{page}");
    assert_eq!(page["next_offset"], 1, "{page}");
    let note = page["note"].as_str().unwrap();
    assert!(note.contains("offset=0&limit=1"), "{note}");
    assert_eq!(done["result"]["associations"], serde_json::json!([]));
    // Asked for, it comes, equal to the whole report's (limit=all) first association.
    let (s, one) = get_json(&app, &format!("/api/captures/{id}?offset=0&limit=1")).await;
    assert_eq!(s, StatusCode::OK);
    let (s, all) = get_json(&app, &format!("/api/captures/{id}?limit=all")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(one["page"]["returned"]["associations"], 1);
    assert_eq!(
        one["result"]["associations"][0],
        all["result"]["associations"][0]
    );
    assert!(one["page"].get("skipped").is_none());
    // Paging without a limit walks past each one in turn.
    let (_, second) = get_json(&app, &format!("/api/captures/{id}?offset=1")).await;
    assert_eq!(second["page"]["skipped"], serde_json::json!([1]));
    assert_eq!(second["page"]["next_offset"], 2);
}
