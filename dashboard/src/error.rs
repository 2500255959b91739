//! The one error type of the dashboard: every handler returns `AppError`, answered as JSON, or as
//! an HTML page for browser page requests (see [`html_errors`]). No internal detail is leaked.

use askama::Template;
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::Json;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// An unknown capture, association, table or page.
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    BadRequest(String),
    /// The upload is larger than `--max-upload`.
    #[error("upload too large: the limit is {limit} bytes ({}); start the dashboard with a larger --max-upload to accept it", human_bytes(*limit))]
    TooLarge { limit: u64 },
    /// The uploaded file is not a capture: the analyzer's error, which names the offset.
    #[error("{0}")]
    NotCapture(String),
    /// The capture exists but its analysis has not finished (or failed).
    #[error("{0}")]
    NotReady(String),
    /// The data dir's file system is full (ENOSPC / quota): nothing partial was kept.
    #[error("no space left in the data dir: the upload was not stored (nothing partial kept); free disk space or start the dashboard with another --data-dir")]
    StorageFull,
    #[error("missing or wrong access token: open the dashboard with ?token=TOKEN once, or send `Authorization: Bearer TOKEN`")]
    Unauthorized,
    /// Anything else: logged with its detail, answered as a bare 500.
    #[error("internal server error")]
    Internal(String),
}

impl AppError {
    pub fn internal(e: impl std::fmt::Display) -> Self {
        AppError::Internal(e.to_string())
    }

    pub fn status(&self) -> StatusCode {
        match self {
            AppError::NotFound(_) => StatusCode::NOT_FOUND,
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::NotCapture(_) => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::NotReady(_) => StatusCode::CONFLICT,
            AppError::StorageFull => StatusCode::INSUFFICIENT_STORAGE,
            AppError::Unauthorized => StatusCode::UNAUTHORIZED,
            AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<std::io::Error> for AppError {
    fn from(e: std::io::Error) -> Self {
        if is_storage_full(&e) {
            tracing::error!("data dir full: {e}");
            return AppError::StorageFull;
        }
        AppError::internal(e)
    }
}

/// ENOSPC (28) or EDQUOT (122 on Linux): the disk or the quota is full.
pub fn is_storage_full(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    ) || matches!(e.raw_os_error(), Some(28 | 122))
}

/// What an error response carries for [`html_errors`] to render it as a page.
#[derive(Debug, Clone)]
pub struct ErrorInfo {
    pub status: StatusCode,
    pub message: String,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        if let AppError::Internal(detail) = &self {
            tracing::error!("internal error: {detail}");
        }
        let message = self.to_string();
        let body = serde_json::json!({ "error": message, "status": status.as_u16() });
        let mut resp = (status, Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        resp.extensions_mut().insert(ErrorInfo { status, message });
        resp
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    title: String,
    message: &'a str,
    status: u16,
}

/// Middleware: an error answered to a page request (not under `/api/`, accepting `text/html`)
/// becomes an HTML page with the same status.
pub async fn html_errors(req: Request, next: Next) -> Response {
    let wants_html = !req.uri().path().starts_with("/api/")
        && req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/html"));
    let resp = next.run(req).await;
    if !wants_html {
        return resp;
    }
    let Some(info) = resp.extensions().get::<ErrorInfo>().cloned() else {
        return resp;
    };
    let page = ErrorPage {
        title: format!(
            "{} {}",
            info.status.as_u16(),
            info.status.canonical_reason().unwrap_or("Error")
        ),
        message: &info.message,
        status: info.status.as_u16(),
    };
    match page.render() {
        Ok(html) => {
            let mut r = (info.status, Html(html)).into_response();
            if let Some(v) = resp.headers().get(header::WWW_AUTHENTICATE) {
                r.headers_mut().insert(header::WWW_AUTHENTICATE, v.clone());
            }
            r
        }
        Err(_) => resp,
    }
}

/// `1.5 GiB`-style size.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_full_is_507_with_a_clear_message() {
        let e: AppError = std::io::Error::from_raw_os_error(28).into();
        assert_eq!(e.status(), StatusCode::INSUFFICIENT_STORAGE);
        assert!(e.to_string().contains("no space left"), "{e}");
        let other: AppError = std::io::Error::from_raw_os_error(13).into();
        assert_eq!(other.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
