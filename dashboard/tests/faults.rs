//! Hostile requests through the whole router (`tower::ServiceExt::oneshot`, no socket): path
//! traversal in every path parameter, uploaded names that look like paths, an upload whose body
//! breaks off half-way, and a capture whose analysis trips the analyzer's bounds. The real-socket
//! load and crash tests are in `load-tests/run.sh`.

use std::path::Path;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, Request, StatusCode};
use axum::Router;
use dashboard::{app, AppState, Config};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

const BOUNDARY: &str = "----faults-boundary-3c9a";

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../sample-traces")
            .join(name),
    )
    .unwrap()
}

fn part_head(filename: &str) -> Vec<u8> {
    format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes()
}

fn multipart(filename: &str, bytes: &[u8]) -> Vec<u8> {
    let mut b = part_head(filename);
    b.extend_from_slice(bytes);
    b.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    b
}

fn upload_req(body: Body) -> Request<Body> {
    Request::post("/api/captures")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(body)
        .unwrap()
}

async fn send(app: &Router, req: Request<Body>) -> (StatusCode, String) {
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status();
    let bytes = match resp.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

async fn get(app: &Router, uri: &str) -> (StatusCode, String) {
    send(app, Request::get(uri).body(Body::empty()).unwrap()).await
}

/// Every file under `dir`, relative.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

fn open(dir: &Path) -> Router {
    let mut c = Config::new(dir);
    c.analysis_workers = 1;
    app(AppState::open(c).unwrap())
}

/// Uploads `bytes` as `name`; the stored capture's id.
async fn upload_id(app: &Router, name: &str, bytes: &[u8]) -> String {
    let (s, body) = send(app, upload_req(Body::from(multipart(name, bytes)))).await;
    assert!(s.is_success(), "{name}: {s} {body}");
    serde_json::from_str::<Value>(&body).unwrap()["captures"][0]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn wait_done(app: &Router, id: &str) -> Value {
    let start = Instant::now();
    loop {
        let (s, b) = get(app, &format!("/api/captures/{id}")).await;
        assert_eq!(s, StatusCode::OK, "{b}");
        let v: Value = serde_json::from_str(&b).unwrap();
        // Done once the summary is published and the tables written (they follow it).
        let tables = v["tables"]["status"].as_str();
        if matches!(v["status"].as_str(), Some("failed"))
            || (v["status"] == "done" && tables != Some("pending"))
        {
            return v;
        }
        assert!(start.elapsed() < Duration::from_secs(120));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn traversal_in_any_path_parameter_is_4xx_and_touches_nothing() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    // A file beside the data dir that a traversal would reach.
    std::fs::write(root.path().join("secret.txt"), "secret").unwrap();
    let app = open(&data);
    let before = files_under(root.path());
    let id0 = "0".repeat(64);
    for uri in [
        "/captures/..%2F..%2Fsecret.txt".to_string(),
        "/captures/%2e%2e%2f%2e%2e%2fsecret.txt".to_string(),
        "/api/captures/..%2Fsecret.txt".to_string(),
        "/api/captures/%2E%2E".to_string(),
        format!("/captures/{id0}/tables/..%2F..%2F..%2Fsecret.txt"),
        format!("/captures/{id0}/tables/%2e%2e%2fmeta.json"),
        format!("/captures/{id0}/associations/..%2F1"),
        format!("/api/captures/{id0}/associations/0/charts/..%2F..%2Fsecret.txt"),
        "/assets/..%2F..%2Fsecret.txt".to_string(),
        "/assets/%2e%2e%2f%2e%2e%2fCargo.toml".to_string(),
    ] {
        let (s, body) = get(&app, &uri).await;
        assert!(s.is_client_error(), "{uri}: {s}");
        assert_ne!(body, "secret", "{uri} leaked the file");
    }
    let del = Request::delete("/api/captures/..%2F..%2Fsecret.txt")
        .body(Body::empty())
        .unwrap();
    assert!(send(&app, del).await.0.is_client_error());
    assert_eq!(
        files_under(root.path()),
        before,
        "nothing written or removed"
    );
    assert_eq!(
        std::fs::read_to_string(root.path().join("secret.txt")).unwrap(),
        "secret"
    );
}

#[tokio::test]
async fn uploaded_names_are_labels_never_paths() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let app = open(&data);
    let bytes = sample("fmt_sender.pcap");
    for (i, name) in [
        "../../escape.pcap",
        "..\\..\\escape.pcap",
        "/etc/escape.pcap",
        "%2e%2e%2fescape.pcap",
    ]
    .iter()
    .enumerate()
    {
        // Distinct content each time (one more byte of trailing garbage), so each is stored.
        let mut b = bytes.clone();
        b.extend(std::iter::repeat_n(0u8, i + 1));
        let (s, body) = send(&app, upload_req(Body::from(multipart(name, &b)))).await;
        assert!(s.is_success(), "{name}: {s} {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let shown = v["captures"][0]["name"].as_str().unwrap();
        assert!(!shown.contains('/') && !shown.contains('\\'), "{shown}");
    }
    for f in files_under(root.path()) {
        assert!(f.starts_with("data/"), "{f} written outside the data dir");
        assert!(!f.contains("escape"), "an uploaded name became a path: {f}");
    }
}

#[tokio::test]
async fn an_upload_broken_off_half_way_leaves_nothing() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let app = open(&data);
    let capture = sample("cut_p20_sack40_sender.pcap");
    // The body stream yields the part header and half the capture, then fails as a dropped
    // connection does.
    let mut first = part_head("half.pcap");
    first.extend_from_slice(&capture[..capture.len() / 2]);
    let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from(first)),
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "client went away",
        )),
    ];
    let body = Body::from_stream(futures_stream(chunks));
    let (s, _) = send(&app, upload_req(body)).await;
    assert!(s.is_client_error() || s.is_server_error(), "{s}");
    let (_, list) = get(&app, "/api/captures").await;
    let v: Value = serde_json::from_str(&list).unwrap();
    assert_eq!(v["captures"].as_array().unwrap().len(), 0, "{list}");
    let left: Vec<String> = files_under(&data)
        .into_iter()
        .filter(|f| !f.starts_with("captures/"))
        .collect();
    assert!(left.is_empty(), "temp files left: {left:?}");
    // The same upload whole afterwards is stored normally.
    let (s, body) = send(
        &app,
        upload_req(Body::from(multipart("whole.pcap", &capture))),
    )
    .await;
    assert!(s.is_success(), "{s} {body}");
}

#[tokio::test]
async fn a_capture_tripping_the_bounds_is_analysed_with_warnings_and_others_stay() {
    let root = tempfile::tempdir().unwrap();
    let app = open(&root.path().join("data"));
    let good_id = upload_id(&app, "good.pcap", &sample("fmt_sender.pcap")).await;
    let good_before = wait_done(&app, &good_id).await;
    for f in ["caplen_over_256k.pcap", "sack_65535_dups.pcap"] {
        let bad = sample(&format!("broken/{f}"));
        let (s, body) = send(&app, upload_req(Body::from(multipart(f, &bad)))).await;
        assert!(s.is_success(), "{f}: {body}");
        let id = serde_json::from_str::<Value>(&body).unwrap()["captures"][0]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let v = wait_done(&app, &id).await;
        assert_eq!(v["status"], "done", "{f}: {v}");
        assert!(
            !v["result"]["warnings"].as_array().unwrap().is_empty(),
            "{f}: no warning"
        );
    }
    let good_after = wait_done(&app, &good_id).await;
    assert_eq!(good_before, good_after, "the stored result changed");
}

/// A stream over prepared items, to feed `Body::from_stream`.
fn futures_stream(
    items: Vec<Result<Bytes, std::io::Error>>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::iter(items)
}

/// What a kill -9 during the table pass leaves (the summary published, `meta.json` saying the
/// tables are pending, a partial `tables.tmp/`), then a restart: the summary is served at once,
/// no table is served before all are written again (409 meanwhile), and the redone tables have
/// the rows of the first run's.
#[tokio::test]
async fn a_stop_while_the_tables_are_written_redoes_them_and_serves_nothing_partial() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let app = open(&data);
    let id = upload_id(&app, "t.pcap", &sample("cut_p20_sack40_sender.pcap")).await;
    let first = wait_done(&app, &id).await;
    assert_eq!(first["tables"]["status"], "ready", "{first}");
    drop(app);
    let dir = data.join("captures").join(&id);
    let saved = root.path().join("saved");
    std::fs::rename(dir.join("tables"), &saved).unwrap();
    std::fs::create_dir(dir.join("tables.tmp")).unwrap();
    let whole = std::fs::read(saved.join("chunks.parquet")).unwrap();
    std::fs::write(
        dir.join("tables.tmp/chunks.parquet"),
        &whole[..whole.len() / 2],
    )
    .unwrap();
    let meta_path = dir.join("meta.json");
    let mut meta: Value = serde_json::from_slice(&std::fs::read(&meta_path).unwrap()).unwrap();
    meta["tables"] = "pending".into();
    std::fs::write(&meta_path, serde_json::to_vec(&meta).unwrap()).unwrap();
    let report = std::fs::read(dir.join("report.json")).unwrap();

    let app = open(&data);
    // On this one-thread runtime the restarted table pass cannot start before the test task
    // awaits something; these first requests are answered without awaiting: no table yet.
    let (s, b) = get(&app, &format!("/captures/{id}/tables/chunks.parquet")).await;
    assert_eq!(
        s,
        StatusCode::CONFLICT,
        "a table served before all were written: {b}"
    );
    assert!(b.contains("not written yet"), "{b}");
    let (s, _) = get(
        &app,
        &format!("/api/captures/{id}/compare/charts/throughput"),
    )
    .await;
    assert_eq!(s, StatusCode::CONFLICT);
    // The summary at once.
    let (s, b) = get(&app, &format!("/api/captures/{id}")).await;
    assert_eq!(s, StatusCode::OK);
    let v: Value = serde_json::from_str(&b).unwrap();
    assert_eq!(v["status"], "done", "{v}");
    assert_eq!(v["result"], first["result"]);
    let v = wait_done(&app, &id).await;
    assert_eq!(v["tables"]["status"], "ready", "{v}");
    assert_eq!(v["progress"]["phase"], "done", "{v}");
    assert!(!dir.join("tables.tmp").exists());
    assert_eq!(std::fs::read(dir.join("report.json")).unwrap(), report);
    let mut n = 0;
    for e in std::fs::read_dir(&saved).unwrap() {
        let p = e.unwrap().path();
        let redone = dir.join("tables").join(p.file_name().unwrap());
        let same = analyzer::frames::same_rows(&p, &redone).unwrap();
        assert!(same.is_ok(), "{}: {same:?}", p.display());
        n += 1;
    }
    assert!(n >= 20, "{n} tables");
    let (s, b) = get(&app, &format!("/captures/{id}/tables/chunks.parquet")).await;
    assert_eq!(s, StatusCode::OK);
    assert!(b.len() > 8);
}

/// The API says where an analysis is: the phase, and the tables' state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_and_tables_are_in_the_api() {
    let root = tempfile::tempdir().unwrap();
    let app = open(&root.path().join("data"));
    let id = upload_id(&app, "f.pcap", &sample("fmt_sender.pcap")).await;
    let (_, b) = get(&app, &format!("/api/captures/{id}")).await;
    let v: Value = serde_json::from_str(&b).unwrap();
    let phase = v["progress"]["phase"].as_str().unwrap();
    assert!(
        ["queued", "reading", "writing_tables", "done"].contains(&phase),
        "{v}"
    );
    for k in ["bytes", "total", "packets", "associations", "detail"] {
        assert!(!v["progress"][k].is_null(), "{k}: {v}");
    }
    let v = wait_done(&app, &id).await;
    assert_eq!(v["progress"]["phase"], "done");
    assert_eq!(v["progress"]["total"], sample("fmt_sender.pcap").len());
    assert!(v["tables"]["ms"].is_u64(), "{v}");
    let (s, _) = get(&app, &format!("/captures/{id}/tables/chunks.csv")).await;
    assert_eq!(s, StatusCode::OK);
}

/// A damaged `digest.json` (what the pages keep in memory of a report, issue 19) is not served:
/// at the next start the capture is analysed again, and its pages, association page included
/// (read from `report.json` through the digest), show what they showed before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_digest_is_made_again_at_the_next_start() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let app = open(&data);
    let id = upload_id(&app, "d.pcap", &sample("cut_p20_sack40_sender.pcap")).await;
    let first = wait_done(&app, &id).await;
    let (_, page) = get(&app, &format!("/captures/{id}")).await;
    let (s, assoc) = get(&app, &format!("/captures/{id}/associations/0")).await;
    assert_eq!(s, StatusCode::OK);
    drop(app);
    let digest = data.join("captures").join(&id).join("digest.json");
    for damage in [&b"{\"head\":"[..], &b""[..]] {
        std::fs::write(&digest, damage).unwrap();
        let app = open(&data);
        let v = wait_done(&app, &id).await;
        assert_eq!(v["result"], first["result"]);
        assert_eq!(get(&app, &format!("/captures/{id}")).await.1, page);
        assert_eq!(
            get(&app, &format!("/captures/{id}/associations/0")).await.1,
            assoc
        );
        let (s, b) = get(&app, &format!("/captures/{id}/associations/99")).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{b}");
        drop(app);
    }
}
