//! Shared helpers of the integration tests: where the sample traces and ../shared live.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use analyzer::analyze::{analyze_file, CaptureAnalysis, Options};
use analyzer::report::CaptureReport;

/// `sample-traces/` of this repository.
pub fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces")
}

/// `../shared/` beside the repository, when present (it is absent on a bare clone).
pub fn shared_dir() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    p.join("captures").is_dir().then_some(p)
}

pub fn analyze(path: &Path) -> (CaptureAnalysis, CaptureReport) {
    let opts = Options::default();
    let c = analyze_file(path, &opts, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let r = CaptureReport::from_analysis(&c);
    (c, r)
}

pub fn tshark() -> Option<&'static str> {
    std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "tshark")
}
