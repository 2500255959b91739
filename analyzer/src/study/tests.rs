//! Study aggregation on hand-made samples; templates and sidecar parameters.

use super::*;

fn sample(
    capture: &str,
    transport: &'static str,
    p: &[(&str, Value)],
    m: &[(&'static str, f64)],
) -> Sample {
    Sample {
        capture: capture.to_string(),
        transport,
        params: p.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
        metrics: m.iter().copied().collect(),
    }
}

#[test]
fn statistics_of_a_group() {
    let s = Stats::of(&[2.0, 4.0, 6.0, 8.0]);
    assert_eq!((s.mean, s.median, s.min, s.max), (5.0, 5.0, 2.0, 8.0));
    // s = sqrt(20 / 3), t(0.975, 3) = 3.182: half width 3.182 * s / 2.
    let half = 3.182 * (20.0f64 / 3.0).sqrt() / 2.0;
    let [lo, hi] = s.ci95.unwrap();
    assert!((lo - (5.0 - half)).abs() < 1e-9 && (hi - (5.0 + half)).abs() < 1e-9);
    let one = Stats::of(&[7.0]);
    assert_eq!((one.median, one.ci95), (7.0, None));
    assert_eq!(Stats::of(&[3.0, 1.0, 2.0]).median, 2.0);
    assert_eq!(t975(1), 12.706);
    assert_eq!(t975(30), 2.042);
    assert_eq!(t975(500), 1.960);
}

#[test]
fn rows_per_group_x_metric_and_transport_in_order() {
    let s = vec![
        sample(
            "a",
            "sctp",
            &[("sack", 200.into()), ("iv", 90.into())],
            &[("failover_ms", 900.0)],
        ),
        sample(
            "b",
            "sctp",
            &[("sack", 200.into()), ("iv", 90.into())],
            &[("failover_ms", 1100.0)],
        ),
        sample(
            "c",
            "sctp",
            &[("sack", 40.into()), ("iv", 10.into())],
            &[("failover_ms", 300.0)],
        ),
        sample(
            "c",
            "tcp",
            &[("sack", 40.into()), ("iv", 10.into())],
            &[("outage_ms", 5.0)],
        ),
        sample(
            "d",
            "sctp",
            &[("sack", 40.into()), ("iv", 100.into())],
            &[("failover_ms", 500.0)],
        ),
    ];
    let spec = StudySpec {
        by: vec!["sack".into()],
        x: Some("iv".into()),
        y: vec!["failover_ms".into(), "outage_ms".into()],
        ..StudySpec::default()
    };
    let r = aggregate(&spec, &s);
    let got: Vec<(Value, Value, &str, &str, u64, f64)> = r
        .rows
        .iter()
        .map(|r| {
            (
                r.group["sack"].clone(),
                r.x.clone(),
                r.metric.as_str(),
                r.transport.as_str(),
                r.n,
                r.mean,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            // 40 before 200 and 10 before 100: numbers by value.
            (40.into(), 10.into(), "failover_ms", "sctp", 1, 300.0),
            (40.into(), 10.into(), "outage_ms", "tcp", 1, 5.0),
            (40.into(), 100.into(), "failover_ms", "sctp", 1, 500.0),
            (200.into(), 90.into(), "failover_ms", "sctp", 2, 1000.0),
        ]
    );
    assert_eq!(r.rows[3].captures, ["a", "b"]);
    assert!(r.rows[3].ci95.is_some());
    assert!(render_text(&r).contains("failover_ms"));
    assert_eq!(render_csv(&r).lines().count(), 5);
}

#[test]
fn a_missing_parameter_groups_as_null() {
    let s = vec![sample("a", "sctp", &[], &[("timeouts", 1.0)])];
    let spec = StudySpec {
        by: vec!["sack".into()],
        y: vec!["timeouts".into()],
        ..StudySpec::default()
    };
    let r = aggregate(&spec, &s);
    assert_eq!(r.rows.len(), 1);
    assert_eq!(r.rows[0].group["sack"], Value::Null);
    assert_eq!(r.rows[0].x, Value::Null);
}

#[test]
fn every_template_parses_and_names_known_metrics() {
    for (name, _) in TEMPLATES {
        let t = template(name).unwrap();
        assert_eq!(t.name.as_deref(), Some(*name));
        assert!(!t.y.is_empty() && t.about.is_some(), "{name}");
        for y in &t.y {
            assert!(METRICS.iter().any(|m| m.0 == y), "{name}: {y}");
        }
    }
    assert!(template("nope")
        .unwrap_err()
        .contains("failover-vs-sack-delay"));
}

#[test]
fn sidecar_parameters_from_truth_meta_and_study_toml() {
    let dir = std::env::temp_dir().join(format!("study-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("run_sack40_truth.json"),
        r#"{"sack_delay_ms": 40, "random_loss_pct": "2", "one_way_delay_ms": {"path1": 20}, "files": ["x"], "ok": true}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("study.toml"),
        "pattern = 'sack(?P<sack_from_name>\\d+)'\n",
    )
    .unwrap();
    let cap = dir.join("run_sack40_sender.pcap");
    let (p, from) = params::sidecar(&cap).unwrap();
    assert_eq!(p["sack_delay_ms"], Value::from(40));
    assert_eq!(p["random_loss_pct"], Value::from(2));
    assert_eq!(p["one_way_delay_ms.path1"], Value::from(20));
    assert_eq!(p["ok"], Value::Bool(true));
    assert_eq!(p["sack_from_name"], Value::from(40));
    assert!(!p.contains_key("files"));
    assert_eq!(from.len(), 2);
    std::fs::write(dir.join("study.toml"), "pattern = '(?P<bad'\n").unwrap();
    assert!(params::sidecar(&cap).unwrap_err().contains("study.toml"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stored_samples_come_back_until_the_capture_or_options_change() {
    let dir = std::env::temp_dir().join(format!("study-cache-{}", std::process::id()));
    let cap = dir.join("x.pcap");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&cap, b"not really a capture").unwrap();
    let store = dir.join("cache");
    let s = vec![sample(
        &cap.display().to_string(),
        "sctp",
        &[("sack_delay_ms", 40.into())],
        &[("failover_ms", 812.5), ("timeouts", 3.0)],
    )];
    assert_eq!(cache::load(&store, &cap, "o"), None);
    cache::store(&store, &cap, "o", &s).unwrap();
    assert_eq!(cache::load(&store, &cap, "o").as_deref(), Some(&s[..]));
    assert_eq!(cache::load(&store, &cap, "other options"), None);
    // Sidecar parameters go over the inferred ones.
    let p: BTreeMap<String, Value> = [("sack_delay_ms".to_string(), Value::from(200))].into();
    assert_eq!(
        cache::with_params(s.clone(), &p)[0].params["sack_delay_ms"],
        200
    );
    // The capture changed: analysed again.
    std::fs::write(&cap, b"a longer capture than before").unwrap();
    assert_eq!(cache::load(&store, &cap, "o"), None);
    std::fs::remove_dir_all(&dir).unwrap();
}
