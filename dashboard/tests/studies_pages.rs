//! The Studies page (`GET /studies`): the Eklund template on `sample-traces/studies/eklund`
//! (and `studies/eklund-linux`) through the router (`oneshot`), with the samples directory set
//! to `sample-traces`.

use std::path::Path;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use dashboard::{app, AppState, Config};
use http_body_util::BodyExt;
use tower::ServiceExt;

async fn get(app: &Router, uri: &str) -> (StatusCode, String) {
    let req = Request::get(uri).body(Body::empty()).unwrap();
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eklund_study_page() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces");
    if !samples.join("studies/eklund").is_dir() {
        eprintln!("skipped: sample-traces/studies/eklund not found");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let mut c = Config::new(data.path());
    c.samples = Some(samples.clone());
    let app = app(AppState::open(c).expect("open state"));

    // The form: templates, metrics and the sample folders with captures.
    let (s, form) = get(&app, "/studies").await;
    assert_eq!(s, StatusCode::OK);
    assert!(form.contains(r#"<option value="failover-vs-sack-delay""#));
    assert!(form.contains(r#"<option value="failover_ms""#));
    assert!(form.contains(r#"<option value="studies/eklund""#), "{form}");
    assert!(form.contains(r#"<option value="studies/eklund-sparse""#));
    assert!(form.contains(r#"<option value="uploaded""#));
    assert!(!form.contains("study-table"));

    let uri = "/studies?template=failover-vs-sack-delay&by=&x=&y=&set=studies%2Feklund";
    let (s, page) = get(&app, uri).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert!(page.contains(r#"id="study-table""#), "{page}");
    assert!(page.contains("36 captures analysed"), "{page}");
    for d in ["0", "40", "200"] {
        let cell = format!("<td>sack_delay_ms={d}</td>");
        assert!(page.contains(&cell), "no row for {cell}");
    }
    assert!(page.contains("<td>failover_ms</td>"));
    assert!(
        page.contains(r#"data-metric="failover_ms""#),
        "no failover_ms chart"
    );
    assert!(page.contains("eklund_sack200_iv50_r2_sender.pcap.gz"));

    // Asked again (from the cache): the same page.
    let (s, again) = get(&app, uri).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(again, page);

    // The rows as downloads, the CLI's `study --format json` / `csv`.
    assert!(page.contains(r#"id="study-json""#) && page.contains(r#"id="study-csv""#));
    let (s, json) = get(&app, &format!("{uri}&format=json")).await;
    assert_eq!(s, StatusCode::OK);
    let r: analyzer::study::StudyReport = serde_json::from_str(&json).expect("study JSON");
    assert_eq!(r.study.as_deref(), Some("failover-vs-sack-delay"));
    assert!(r
        .rows
        .iter()
        .any(|row| row.metric == "failover_ms" && row.group["sack_delay_ms"] == 200));
    let (s, csv) = get(&app, &format!("{uri}&format=csv")).await;
    assert_eq!(s, StatusCode::OK);
    assert!(csv.starts_with("group,x,metric,transport,n,mean"), "{csv}");
    assert_eq!(csv.lines().count(), r.rows.len() + 1);
    let (s, _) = get(&app, &format!("{uri}&format=xml")).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);

    // One metric by hand; an unknown set or metric is a 400.
    let (s, one) = get(
        &app,
        "/studies?by=sack_delay_ms&x=message_interval_ms&y=failover_ms&set=studies%2Feklund",
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(one.contains("<td>failover_ms</td>"));
    assert!(!one.contains("<td>max_transfer_ms</td>"));
    let (s, _) = get(&app, "/studies?set=..%2F..").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, _) = get(&app, "/studies?y=nope&set=studies%2Feklund").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);

    // The same grid with the Linux kernel's SCTP (parameters from its study.toml).
    if samples.join("studies/eklund-linux").is_dir() {
        assert!(form.contains(r#"<option value="studies/eklund-linux""#));
        let (s, linux) = get(
            &app,
            "/studies?template=failover-vs-sack-delay&by=&x=&y=&set=studies%2Feklund-linux",
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{linux}");
        assert!(linux.contains("36 captures analysed"), "{linux}");
        for d in ["0", "40", "200"] {
            assert!(linux.contains(&format!("<td>sack_delay_ms={d}</td>")));
        }
        assert!(linux.contains(r#"data-metric="failover_ms""#));
        assert!(linux.contains("eklund-linux_sack200_iv90_r3_sender.pcap.gz"));
    }

    // No uploads: the study runs over nothing.
    let (s, none) = get(&app, "/studies?template=link-failure&set=uploaded").await;
    assert_eq!(s, StatusCode::OK);
    assert!(none.contains("0 captures analysed"));
}
