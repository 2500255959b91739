//! The study DataFrame (`sctp-analyzer study --format parquet`): one row per group, x value,
//! metric and transport, laid out from `study::StudyReport` (computed there).

use polars::prelude::*;

use super::col;
use crate::study::StudyReport;

/// The rows of a study; `group` and `x` as JSON text (parameter values of any type).
pub fn study(r: &StudyReport) -> PolarsResult<DataFrame> {
    let rows = &r.rows;
    DataFrame::new_infer_height(vec![
        col(
            "group",
            rows.iter()
                .map(|x| serde_json::to_string(&x.group).unwrap_or_default())
                .collect::<Vec<_>>(),
        ),
        col(
            "x",
            rows.iter().map(|x| x.x.to_string()).collect::<Vec<_>>(),
        ),
        col(
            "metric",
            rows.iter().map(|x| x.metric.as_str()).collect::<Vec<_>>(),
        ),
        col(
            "transport",
            rows.iter()
                .map(|x| x.transport.as_str())
                .collect::<Vec<_>>(),
        ),
        col("n", rows.iter().map(|x| x.n).collect::<Vec<_>>()),
        col("mean", rows.iter().map(|x| x.mean).collect::<Vec<_>>()),
        col("median", rows.iter().map(|x| x.median).collect::<Vec<_>>()),
        col("min", rows.iter().map(|x| x.min).collect::<Vec<_>>()),
        col("max", rows.iter().map(|x| x.max).collect::<Vec<_>>()),
        col(
            "ci95_lo",
            rows.iter()
                .map(|x| x.ci95.map(|c| c[0]))
                .collect::<Vec<_>>(),
        ),
        col(
            "ci95_hi",
            rows.iter()
                .map(|x| x.ci95.map(|c| c[1]))
                .collect::<Vec<_>>(),
        ),
        col(
            "captures",
            rows.iter()
                .map(|x| x.captures.join(" "))
                .collect::<Vec<_>>(),
        ),
    ])
}
