//! The Studies page (`GET /studies`): the Eklund template on `sample-traces/studies/eklund`
//! (and `studies/eklund-linux`) through the router (`oneshot`), with the samples directory set
//! to `sample-traces`: the form, the table, the charts' data (one chart per metric, one series
//! per group, error bars, tooltips, each point naming its row), the captures behind each row and
//! their links (`/studies/open` stores a sample set's file), several metrics, picked uploads, and
//! the study cache following the set's files.

use std::path::Path;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use dashboard::{app, AppState, Config};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

async fn get(app: &Router, uri: &str) -> (StatusCode, String) {
    let req = Request::get(uri).body(Body::empty()).unwrap();
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// A GET's status and `Location` header.
async fn get_location(app: &Router, uri: &str) -> (StatusCode, String) {
    let req = Request::get(uri).body(Body::empty()).unwrap();
    let resp = app.clone().oneshot(req).await.expect("infallible");
    let loc = resp
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (resp.status(), loc)
}

/// The charts' data the page carries (`<script id="study-chart-data">`).
fn chart_data(page: &str) -> Value {
    let open = r#"<script type="application/json" id="study-chart-data">"#;
    let i = page.find(open).expect("chart data") + open.len();
    let j = i + page[i..].find("</script>").unwrap();
    serde_json::from_str(&page[i..j]).expect("chart JSON")
}

/// The HTML of the table row `study-row-{i}`.
fn row_html(page: &str, i: usize) -> &str {
    let start = page
        .find(&format!(r#"<tr id="study-row-{i}">"#))
        .unwrap_or_else(|| panic!("no row {i}"));
    let end = start + page[start..].find("</tr>").unwrap();
    &page[start..end]
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~:".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Polls a capture until its analysis is done.
async fn wait_done(app: &Router, id: &str) {
    let start = Instant::now();
    loop {
        let (s, b) = get(app, &format!("/api/captures/{id}")).await;
        assert_eq!(s, StatusCode::OK, "{b}");
        let v: Value = serde_json::from_str(&b).unwrap();
        if v["status"] == "done" || v["status"] == "failed" {
            assert_eq!(v["status"], "done", "{v}");
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "analysis too slow"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every chart point is its row of the study's JSON: one chart per metric, one series per
/// group, y the mean, the error bar its 95% CI, the tooltip its n, mean and CI, the reference
/// its table row, which lists the row's captures with a link each.
fn check_charts(page: &str, r: &analyzer::study::StudyReport, set: &str) {
    let data = chart_data(page);
    let metrics: std::collections::BTreeSet<&str> =
        r.rows.iter().map(|x| x.metric.as_str()).collect();
    assert_eq!(data.as_object().unwrap().len(), metrics.len(), "{data}");
    for (i, row) in r.rows.iter().enumerate() {
        let c = &data[&row.metric];
        assert!(
            page.contains(&format!(r#"data-chart="{}""#, row.metric)),
            "no chart element for {}",
            row.metric
        );
        assert_eq!(c["zoom_group"], "study");
        let label: Vec<String> = row.group.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let label = label.join(", ");
        let series = c["series"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["label"] == label.as_str())
            .unwrap_or_else(|| panic!("no series {label} in {c}"));
        assert_eq!(series["style"], "linepoints");
        let x = row.x.as_f64().expect("numeric x");
        let k = c["x"]
            .as_array()
            .unwrap()
            .iter()
            .position(|v| v.as_f64() == Some(x))
            .expect("x in the chart");
        assert_eq!(series["y"][k].as_f64(), Some(row.mean));
        match row.ci95 {
            Some([lo, hi]) => {
                assert_eq!(series["err"][k][0].as_f64(), Some(lo));
                assert_eq!(series["err"][k][1].as_f64(), Some(hi));
            }
            None => assert!(series["err"][k].is_null()),
        }
        let tip = series["tips"][k].as_str().unwrap();
        assert!(tip.starts_with(&format!("n {}, mean ", row.n)), "{tip}");
        assert!(tip.contains("95% CI"), "{tip}");
        assert_eq!(series["refs"][k], format!("study-row-{i}").as_str());
        let html = row_html(page, i);
        assert!(html.contains(&format!("<td>{}</td>", row.metric)), "{html}");
        assert_eq!(html.matches("<li>").count(), row.captures.len(), "{html}");
        for cap in &row.captures {
            let open = format!("/studies/open?set={}&#38;file={}", encode(set), encode(cap));
            // Its capture page when the dashboard holds it, else the link that stores it.
            let direct = html.find(&format!(r#"">{cap}</a>"#)).is_some_and(|i| {
                i > 74
                    && html[..i].ends_with(|c: char| c.is_ascii_hexdigit())
                    && html[i - 74..i - 64].ends_with("/captures/")
            });
            assert!(
                html.contains(&format!(r#"<a href="{open}""#)) || direct,
                "no link to {cap} in {html}"
            );
            assert!(html.contains(cap.as_str()), "{cap} not in {html}");
        }
    }
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
    assert!(form.contains(r#"<input type="checkbox" name="y" value="failover_ms">"#));
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
    assert!(page.contains(r#"<script src="/assets/charts.js">"#));

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

    // The charts: every metric of the template, each group a series, each point its row.
    let metrics: std::collections::BTreeSet<&str> =
        r.rows.iter().map(|x| x.metric.as_str()).collect();
    for m in [
        "failover_ms",
        "max_transfer_ms",
        "rto_at_failure_ms",
        "sacks_per_data_packet",
    ] {
        assert!(metrics.contains(m), "no {m} rows");
    }
    check_charts(&page, &r, "studies/eklund");
    let data = chart_data(&page);
    let labels: Vec<&str> = data["failover_ms"]["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["sack_delay_ms=0", "sack_delay_ms=40", "sack_delay_ms=200"]
    );
    assert_eq!(
        data["failover_ms"]["x"],
        serde_json::json!([10.0, 30.0, 50.0, 90.0])
    );

    // A capture behind a point, one click away: not in the dashboard yet, its link stores it
    // and opens its capture page; the study's rows then link to that page directly.
    let cap = "eklund_sack200_iv50_r2_sender.pcap.gz";
    let open = format!("/studies/open?set=studies%2Feklund&file={cap}");
    assert!(page.contains(&open.replace('&', "&#38;")), "no link {open}");
    let (s, loc) = get_location(&app, &open).await;
    assert!(s.is_redirection(), "{s}");
    let id = loc
        .strip_prefix("/captures/")
        .expect("a capture page")
        .to_string();
    assert_eq!(id.len(), 64);
    wait_done(&app, &id).await;
    let (s, again) = get(&app, uri).await;
    assert_eq!(s, StatusCode::OK);
    assert!(again.contains(&format!(r#"<a href="/captures/{id}">{cap}</a>"#)));
    assert!(!again.contains(&open.replace('&', "&#38;")));
    let (s, same) = get_location(&app, &open).await;
    assert!(s.is_redirection());
    assert_eq!(same, loc);
    for bad in [
        "/studies/open?set=studies%2Feklund&file=..%2F..%2FREADME.md",
        "/studies/open?set=studies%2Feklund&file=campaign.json",
    ] {
        let (s, _) = get_location(&app, bad).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{bad}");
    }
    let (s, _) = get_location(&app, "/studies/open?set=..&file=x.pcap").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);

    // That capture picked alone (the uploaded captures are offered one by one).
    let (_, form) = get(&app, "/studies").await;
    assert!(form.contains(&format!(r#"name="capture" value="{id}""#)));
    let (s, picked) = get(
        &app,
        &format!("/studies?template=failover-vs-sack-delay&set=uploaded&capture={id}"),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{picked}");
    assert!(picked.contains("1 uploaded captures picked"), "{picked}");
    assert!(picked.contains("1 captures analysed"));
    assert!(picked.contains(&format!(r#"<a href="/captures/{id}">{cap}</a>"#)));
    let (s, _) = get(&app, "/studies?set=uploaded&capture=nope").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);

    // Several metrics at once (repeated or comma-separated), the downloads keep them.
    for q in [
        "y=failover_ms&y=sacks_per_data_packet",
        "y=failover_ms,sacks_per_data_packet",
    ] {
        let (s, two) = get(
            &app,
            &format!("/studies?by=sack_delay_ms&x=message_interval_ms&{q}&set=studies%2Feklund"),
        )
        .await;
        assert_eq!(s, StatusCode::OK);
        let d = chart_data(&two);
        let keys: Vec<&String> = d.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["failover_ms", "sacks_per_data_packet"]);
        assert!(two.contains("y=failover_ms&#38;y=sacks_per_data_packet&amp;format=csv"));
    }

    // No numeric x: no empty plot, the page says why.
    let (s, nox) = get(
        &app,
        "/studies?by=sack_delay_ms&y=failover_ms&set=studies%2Feklund",
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(chart_data(&nox), serde_json::json!({}));
    assert!(
        nox.contains("no chart: the study has no x parameter"),
        "{nox}"
    );
    let (s, text) = get(
        &app,
        "/studies?by=sack_delay_ms&x=transport&y=failover_ms&set=studies%2Feklund",
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert!(
        text.contains("no chart: the x parameter transport is not numeric"),
        "{text}"
    );

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
        let (s, json) = get(
            &app,
            "/studies?template=failover-vs-sack-delay&set=studies%2Feklund-linux&format=json",
        )
        .await;
        assert_eq!(s, StatusCode::OK);
        let r: analyzer::study::StudyReport = serde_json::from_str(&json).unwrap();
        check_charts(&linux, &r, "studies/eklund-linux");
    }

    // The uploaded set: the capture opened above.
    let (s, up) = get(&app, "/studies?template=link-failure&set=uploaded").await;
    assert_eq!(s, StatusCode::OK);
    assert!(up.contains("1 captures analysed"), "{up}");
}

/// A study of a set is run again when the set's files change (a capture added).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn study_cache_follows_the_files() {
    let eklund = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces/studies/eklund");
    if !eklund.is_dir() {
        eprintln!("skipped: sample-traces/studies/eklund not found");
        return;
    }
    let samples = tempfile::tempdir().unwrap();
    let set = samples.path().join("grid");
    std::fs::create_dir(&set).unwrap();
    let copy = |run: &str| {
        for f in [format!("{run}_sender.pcap.gz"), format!("{run}_truth.json")] {
            std::fs::copy(eklund.join(&f), set.join(&f)).unwrap();
        }
    };
    copy("eklund_sack200_iv90_r1");
    let data = tempfile::tempdir().unwrap();
    let mut c = Config::new(data.path());
    c.samples = Some(samples.path().to_path_buf());
    let app = app(AppState::open(c).expect("open state"));
    let uri = "/studies?template=failover-vs-sack-delay&set=grid";
    let (s, one) = get(&app, uri).await;
    assert_eq!(s, StatusCode::OK, "{one}");
    assert!(one.contains("1 captures analysed"), "{one}");
    copy("eklund_sack200_iv90_r2");
    let (s, two) = get(&app, uri).await;
    assert_eq!(s, StatusCode::OK);
    assert!(two.contains("2 captures analysed"), "{two}");
    assert!(two.contains("eklund_sack200_iv90_r2_sender.pcap.gz"));
}
