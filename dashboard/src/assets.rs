//! Static assets compiled into the binary (works offline, no CDN): the vendored uPlot and the
//! dashboard's own small CSS and JavaScript.

use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::error::AppError;

const ASSETS: [(&str, &str, &str); 7] = [
    (
        "uPlot.iife.min.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/uPlot.iife.min.js"),
    ),
    (
        "uPlot.min.css",
        "text/css; charset=utf-8",
        include_str!("../assets/uPlot.min.css"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("../assets/app.css"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/app.js"),
    ),
    (
        "charts.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/charts.js"),
    ),
    (
        "upload.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/upload.js"),
    ),
    (
        "studies.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/studies.js"),
    ),
];

/// `GET /assets/{file}`
pub async fn serve(Path(file): Path<String>) -> Result<Response, AppError> {
    let (_, mime, body) = ASSETS
        .iter()
        .find(|(n, _, _)| *n == file)
        .ok_or_else(|| AppError::NotFound(format!("asset {file}")))?;
    Ok((
        [
            (header::CONTENT_TYPE, *mime),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        *body,
    )
        .into_response())
}
