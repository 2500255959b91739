//! `sctp-dashboard`: serves the web dashboard (see the `dashboard` library) on 127.0.0.1:8080.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dashboard::{app, AppState, Config};

// mimalloc (`analyzer::alloc`), as the CLI: the passes build associations on one thread and free
// them on another; freed memory is returned at once (lower peak RSS with several analyses).
#[global_allocator]
static GLOBAL: analyzer::alloc::MiMalloc = analyzer::alloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "sctp-dashboard",
    version,
    about = "Web dashboard of the SCTP trace analyzer"
)]
struct Cli {
    /// Address to listen on. A non-loopback address exposes the dashboard to the network.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Where uploads and results are stored (created if missing).
    #[arg(long, default_value = "./data")]
    data_dir: PathBuf,
    /// Largest upload in bytes (suffixes K, M, G, T accepted: 2G = 2 GiB).
    #[arg(long, default_value = "2G", value_parser = parse_bytes)]
    max_upload: u64,
    /// Capture files analysed and listed at start (imported once; deleting one keeps it deleted).
    #[arg(long, default_value = "sample-traces")]
    samples: PathBuf,
    /// Require this access token (bearer header, or `?token=` once to set a cookie).
    #[arg(long, env = "SCTP_DASHBOARD_TOKEN")]
    token: Option<String>,
    /// Analyses running at once (default: number of CPUs).
    #[arg(long)]
    workers: Option<usize>,
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => {
            let unit = s[i..]
                .trim_end_matches(['b', 'B', 'i'])
                .to_ascii_uppercase();
            let m: u64 = match unit.as_str() {
                "" => 1,
                "K" => 1 << 10,
                "M" => 1 << 20,
                "G" => 1 << 30,
                "T" => 1 << 40,
                _ => return Err(format!("unknown size unit in {s:?}")),
            };
            (&s[..i], m)
        }
        None => (s, 1),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {s:?}"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("size too large: {s:?}"))
}

#[tokio::main]
async fn main() -> ExitCode {
    analyzer::alloc::tune(false);
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,tower_http=warn".into()),
        )
        .init();
    let cli = Cli::parse();
    let mut config = Config::new(&cli.data_dir);
    config.max_upload = cli.max_upload;
    config.token = cli.token.filter(|t| !t.is_empty());
    config.samples = Some(cli.samples.clone());
    if let Some(w) = cli.workers {
        config.analysis_workers = w.max(1);
    }
    if !cli.listen.ip().is_loopback() {
        let msg = if config.token.is_some() {
            "access needs the --token"
        } else {
            "anyone who can reach it can upload and delete captures; consider --token"
        };
        tracing::warn!(
            "listening on non-loopback address {}: the dashboard is reachable from the network ({msg})",
            cli.listen
        );
    }
    let state = match AppState::open(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sctp-dashboard: {}: {e}", cli.data_dir.display());
            return ExitCode::from(1);
        }
    };
    match state.import_samples(&cli.samples).await {
        Ok(0) => {}
        Ok(n) => tracing::info!("{n} sample traces from {} queued", cli.samples.display()),
        Err(e) => tracing::warn!("sample traces at {}: {e}", cli.samples.display()),
    }
    let listener = match tokio::net::TcpListener::bind(cli.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("sctp-dashboard: cannot listen on {}: {e}", cli.listen);
            return ExitCode::from(1);
        }
    };
    let addr = listener.local_addr().unwrap_or(cli.listen);
    println!(
        "sctp-dashboard: serving http://{addr}/ (data in {})",
        cli.data_dir.display()
    );
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    if let Err(e) = axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown)
        .await
    {
        eprintln!("sctp-dashboard: {e}");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("2G"), Ok(2 << 30));
        assert_eq!(parse_bytes("10 MiB"), Ok(10 << 20));
        assert_eq!(parse_bytes("123"), Ok(123));
        assert!(parse_bytes("1X").is_err());
    }
}
