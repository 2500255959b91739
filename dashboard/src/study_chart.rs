//! The Studies page's charts (`study_charts`): per metric, the mean against x with its 95%
//! confidence interval, one series per group, each point naming its table row; and the texts
//! of a study row's x, group and interval that the chart tooltips and the table share.

use std::collections::BTreeMap;

use analyzer::study::{self, StudyReport};
use serde_json::Value;

use crate::series::{color, Chart, Series};
use crate::views::{round, NONE};

pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::Null => NONE.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |f| round(f, 3)),
        other => other.to_string(),
    }
}

pub(crate) fn group_text(g: &BTreeMap<String, Value>) -> String {
    if g.is_empty() {
        return "all".to_string();
    }
    g.iter()
        .map(|(k, v)| format!("{k}={}", value_text(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn ci_text(ci: Option<[f64; 2]>) -> String {
    ci.map_or(NONE.to_string(), |c| {
        format!("[{}, {}]", round(c[0], 3), round(c[1], 3))
    })
}

/// One chart point: x, row index, mean, CI, tooltip.
struct Point {
    x: f64,
    row: usize,
    mean: f64,
    ci: Option<[f64; 2]>,
    tip: String,
}

/// Per metric, the chart of the mean against x for `charts.js`: one
/// series per group (and transport when the study has both), the 95% CI as error bars, each
/// point referring to its table row (`study-row-N`); or why there is none (no numeric x).
pub fn study_charts(r: &StudyReport) -> Vec<(String, Result<Chart, String>)> {
    let mut metrics: Vec<&str> = Vec::new();
    for row in &r.rows {
        if !metrics.contains(&row.metric.as_str()) {
            metrics.push(&row.metric);
        }
    }
    // In the order `study --list` names them (the templates' order).
    metrics.sort_by_key(|m| study::METRICS.iter().position(|x| x.0 == *m));
    let transports: std::collections::BTreeSet<&str> =
        r.rows.iter().map(|x| x.transport.as_str()).collect();
    let x_label = r.x.clone().unwrap_or_else(|| "x".into());
    let mut out = Vec::new();
    for m in metrics {
        let mut series: Vec<(String, Vec<Point>)> = Vec::new();
        let mut other_x: Vec<String> = Vec::new();
        for (i, row) in r.rows.iter().enumerate().filter(|x| x.1.metric == m) {
            let Some(x) = row.x.as_f64() else {
                let t = value_text(&row.x);
                if !other_x.contains(&t) {
                    other_x.push(t);
                }
                continue;
            };
            let mut name = group_text(&row.group);
            if transports.len() > 1 {
                name = format!("{name} ({})", row.transport);
            }
            let tip = format!(
                "n {}, mean {}, 95% CI {}",
                row.n,
                round(row.mean, 3),
                ci_text(row.ci95)
            );
            let pt = Point {
                x,
                row: i,
                mean: row.mean,
                ci: row.ci95,
                tip,
            };
            match series.iter_mut().find(|s| s.0 == name) {
                Some(s) => s.1.push(pt),
                None => series.push((name, vec![pt])),
            }
        }
        if series.is_empty() {
            let why = match &r.x {
                None => "no chart: the study has no x parameter (choose one to draw curves; the rows are in the table)".to_string(),
                Some(x) if other_x.iter().all(|v| v == NONE) => {
                    format!("no chart: no capture has a value of the x parameter {x}")
                }
                Some(x) => format!(
                    "no chart: the x parameter {x} is not numeric (values {})",
                    other_x.join(", ")
                ),
            };
            out.push((m.to_string(), Err(why)));
            continue;
        }
        let mut xs: Vec<f64> = series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.x))
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let (x0, x1) = (xs[0], xs[xs.len() - 1]);
        let pad = if x1 > x0 { (x1 - x0) * 0.05 } else { 1.0 };
        let full = [x0 - pad, x1 + pad];
        let total_points = xs.len();
        let chart_series = series
            .into_iter()
            .enumerate()
            .map(|(k, (label, pts))| {
                let mut y = vec![None; total_points];
                let mut err = vec![None; total_points];
                let mut tips = vec![None; total_points];
                let mut refs = vec![None; total_points];
                let total = pts.len();
                for p in pts {
                    if let Ok(i) = xs.binary_search_by(|v| v.total_cmp(&p.x)) {
                        y[i] = Some(p.mean);
                        err[i] = p.ci;
                        tips[i] = Some(p.tip);
                        refs[i] = Some(format!("study-row-{}", p.row));
                    }
                }
                Series {
                    label,
                    style: "linepoints",
                    color: color(k).to_string(),
                    frames: vec![None; total_points],
                    y,
                    total,
                    err: Some(err),
                    tips: Some(tips),
                    refs: Some(refs),
                }
            })
            .collect();
        let chart = Chart {
            title: format!("{m}: mean against {x_label} (bars: 95% CI)"),
            x_label: x_label.clone(),
            y_label: m.to_string(),
            time_axis: false,
            x: xs,
            series: chart_series,
            full,
            range: full,
            width: crate::series::DEFAULT_WIDTH,
            events: Vec::new(),
            bands: Vec::new(),
            lanes: Vec::new(),
            note: (!other_x.is_empty())
                .then(|| format!("rows with x {} are in the table only", other_x.join(", "))),
            decimated: false,
            reduction: None,
            zoom_group: Some("study".into()),
        };
        out.push((m.to_string(), Ok(chart)));
    }
    out
}
