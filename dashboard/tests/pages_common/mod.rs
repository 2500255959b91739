//! What the page tests share: requests through the router (`oneshot`), an upload that waits
//! for its analysis, and HTML helpers.
#![allow(dead_code)]

use std::path::Path;

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use dashboard::{app, AppState, Config};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

const BOUNDARY: &str = "----page-test-boundary-41c2";

pub async fn send(app: &Router, req: Request<Body>) -> (StatusCode, String) {
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

pub async fn get(app: &Router, uri: &str) -> (StatusCode, String) {
    let req = Request::get(uri)
        .header(header::ACCEPT, "text/html")
        .body(Body::empty())
        .unwrap();
    send(app, req).await
}

pub async fn get_json(app: &Router, uri: &str) -> Value {
    let req = Request::get(uri)
        .header(header::ACCEPT, "application/json")
        .body(Body::empty())
        .unwrap();
    let (s, b) = send(app, req).await;
    assert_eq!(s, StatusCode::OK, "{uri}: {b}");
    serde_json::from_str(&b).expect("json")
}

/// Uploads `bytes` as `name` and waits for the analysis: (id, the API answer).
pub async fn analysed(app: &Router, name: &str, bytes: &[u8]) -> (String, Value) {
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
        // Done once the summary is published and the tables written (they follow it).
        match (v["status"].as_str(), v["tables"]["status"].as_str()) {
            (Some("done"), Some("ready")) => return (id, v),
            (Some("failed"), _) | (_, Some("failed")) => panic!("analysis failed: {v}"),
            _ => {}
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "analysis too slow"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The bytes of `sample-traces/NAME`.
pub fn sample(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-traces")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Uploads `sample-traces/NAME` under its name and waits for the analysis: (id, the API answer).
pub async fn analysed_sample(app: &Router, name: &str) -> (String, Value) {
    analysed(app, name, &sample(name)).await
}

pub fn open(dir: &Path) -> Router {
    app(AppState::open(Config::new(dir)).expect("open state"))
}

/// Undoes askama's HTML escaping for text comparisons.
pub fn unescape(html: &str) -> String {
    html.replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#38;", "&")
}

/// The element starting at the first `marker` up to the next `end`.
pub fn element<'a>(html: &'a str, marker: &str, end: &str) -> &'a str {
    let at = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} not in the page"));
    let rest = &html[at..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// The bytes of a public capture of `../shared/captures/public` (beside the repository), or
/// None when `../shared` is absent (the test then skips).
pub fn public_capture(name: &str) -> Option<Vec<u8>> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/captures/public")
        .join(name);
    if !p.is_file() {
        eprintln!("skipped: {name} not found");
        return None;
    }
    Some(std::fs::read(&p).expect("a public capture reads"))
}
pub mod many;
