//! The broken-input corpus (`sample-traces/broken/`, written by its `generate.py`): the CLI on
//! each file gives the expected exit status and error or warning text of `expected.tsv`, never
//! panics, and stays under the file's peak-RSS cap (measured with wait4's rusage). The two large
//! cases (1,000,000 verification tags, 100,000 chunks in one packet) are built here, with the
//! same layout as `generate.py --big` writes them, instead of being committed.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces/broken")
}

/// One row of `expected.tsv`.
#[derive(Debug)]
struct Row {
    file: String,
    exit: i32,
    kind: String,
    text: String,
    cap_mib: u64,
}

fn rows() -> Vec<Row> {
    let tsv = std::fs::read_to_string(corpus_dir().join("expected.tsv")).unwrap();
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 5, "bad row {l:?}");
            Row {
                file: f[0].to_string(),
                exit: f[1].parse().unwrap(),
                kind: f[2].to_string(),
                text: f[3].to_string(),
                cap_mib: f[4].parse().unwrap(),
            }
        })
        .collect()
}

/// What one CLI run gave.
struct Run {
    exit: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    max_rss_kib: i64,
}

/// GNU time, which measures a child it forked itself (see `run_cli`).
const GNU_TIME: &str = "/usr/bin/time";

/// Runs `sctp-analyzer analyze --format json FILE` and measures the child's peak RSS.
///
/// Through GNU time when present: std spawns with `CLONE_VM` (posix_spawn), and at `exec` Linux
/// records the shared memory's high-water mark as the child's peak RSS (`ru_maxrss`), so a
/// child spawned from this test process, grown by the tests running beside it, read as 71 MiB
/// for an empty capture. GNU time forks from its own small process: the figure is the CLI's.
// Reaped with wait4 (for its rusage), not `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_cli(file: &Path) -> Run {
    let cli = env!("CARGO_BIN_EXE_sctp-analyzer");
    let rss_file = std::env::temp_dir().join(format!(
        "broken-rss-{}-{}",
        std::process::id(),
        file.file_name().unwrap().to_string_lossy()
    ));
    let timed = Path::new(GNU_TIME).exists();
    let mut cmd = if timed {
        let mut c = Command::new(GNU_TIME);
        c.arg("-f").arg("%M").arg("-o").arg(&rss_file).arg(cli);
        c
    } else {
        Command::new(cli)
    };
    let mut child = cmd
        .args(["analyze", "--format", "json", "--no-progress"])
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        out.read_to_end(&mut v).unwrap();
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).unwrap();
        s
    });
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for this child (which std has not reaped).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    let exit = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let max_rss_kib = if timed {
        let text = std::fs::read_to_string(&rss_file).expect("GNU time's output");
        let _ = std::fs::remove_file(&rss_file);
        // The last line is %M (a signal ends the child: a "Command terminated" line before it).
        text.lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("GNU time printed {text:?}"))
    } else {
        ru.ru_maxrss
    };
    Run {
        exit,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
        max_rss_kib,
    }
}

// --- the large cases, as generate.py builds them ---

const T0: u64 = 1_700_000_000_000_000;

use common::{data_chunk, ipv4, push_record as record, raw_pcap_header as pcap_header, sctp};

/// pcapng block (pcapng 3.1): type, total length, body padded to 32 bits, total length.
fn block(out: &mut Vec<u8>, btype: u32, body: &[u8]) {
    let pad = (4 - body.len() % 4) % 4;
    let n = (12 + body.len() + pad) as u32;
    out.extend_from_slice(&btype.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(body);
    out.extend(std::iter::repeat_n(0u8, pad));
    out.extend_from_slice(&n.to_le_bytes());
}

fn big_100k_chunks() -> Vec<u8> {
    let mut chunks = Vec::with_capacity(2_000_000);
    for i in 0..100_000 {
        data_chunk(&mut chunks, i);
    }
    let pkt = ipv4(&sctp(0x1234, &chunks), Some(0));
    let mut out = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    block(&mut out, 0x0A0D_0D0A, &shb);
    let mut idb = Vec::new();
    idb.extend_from_slice(&101u16.to_le_bytes());
    idb.extend_from_slice(&0u16.to_le_bytes());
    idb.extend_from_slice(&0u32.to_le_bytes());
    block(&mut out, 1, &idb);
    let mut epb = Vec::new();
    epb.extend_from_slice(&0u32.to_le_bytes());
    epb.extend_from_slice(&((T0 >> 32) as u32).to_le_bytes());
    epb.extend_from_slice(&(T0 as u32).to_le_bytes());
    epb.extend_from_slice(&(pkt.len() as u32).to_le_bytes());
    epb.extend_from_slice(&(pkt.len() as u32).to_le_bytes());
    epb.extend_from_slice(&pkt);
    block(&mut out, 6, &epb);
    out
}

fn big_vtags(n: u32) -> Vec<u8> {
    let mut out = pcap_header();
    out.reserve(n as usize * 68);
    let mut chunk = Vec::with_capacity(20);
    for i in 0..n {
        chunk.clear();
        data_chunk(&mut chunk, i);
        record(
            &mut out,
            T0 + u64::from(i),
            &ipv4(&sctp(0x10000 + i, &chunk), None),
        );
    }
    out
}

/// Checks one row; returns the table line for the note.
/// Runs the CLI on one row's file, checks the row, prints its line; returns the JSON output.
fn check(row: &Row, path: &Path) -> Value {
    let run = run_cli(path);
    assert!(
        !run.stderr.contains("panicked"),
        "{}: panic: {}",
        row.file,
        run.stderr
    );
    assert_eq!(
        run.exit,
        Some(row.exit),
        "{}: exit status (stderr: {})",
        row.file,
        run.stderr
    );
    let doc: Value = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("{}: JSON: {e}: {}", row.file, run.stderr));
    let cap = &doc["captures"][0];
    let warnings: Vec<&str> = cap["warnings"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let error = cap["error"].as_str();
    match row.kind.as_str() {
        "error" => {
            let e = error.unwrap_or_else(|| panic!("{}: no error", row.file));
            assert!(e.contains(&row.text), "{}: error {e:?}", row.file);
            assert!(
                run.stderr.contains(&row.file) && run.stderr.contains(&row.text),
                "{}: stderr {:?}",
                row.file,
                run.stderr
            );
        }
        "warning" => {
            assert!(error.is_none(), "{}: error {error:?}", row.file);
            assert!(
                warnings.iter().any(|w| w.contains(&row.text)),
                "{}: no warning with {:?} in {warnings:?}",
                row.file,
                row.text
            );
        }
        "ok" => {
            assert!(error.is_none(), "{}: error {error:?}", row.file);
            assert!(warnings.is_empty(), "{}: warnings {warnings:?}", row.file);
            assert!(
                !cap["associations"].as_array().unwrap().is_empty(),
                "{}: no association",
                row.file
            );
        }
        k => panic!("unknown kind {k}"),
    }
    let rss_mib = run.max_rss_kib as f64 / 1024.0;
    assert!(
        rss_mib <= row.cap_mib as f64,
        "{}: peak RSS {rss_mib:.1} MiB over the cap {} MiB",
        row.file,
        row.cap_mib
    );
    let shown = error
        .map(str::to_string)
        .or_else(|| {
            warnings
                .iter()
                .find(|w| w.contains(&row.text))
                .map(|w| w.to_string())
        })
        .unwrap_or_else(|| "-".into());
    eprintln!(
        "| `{}` | {} | {} | {:.1} | {} |",
        row.file, row.exit, shown, rss_mib, row.cap_mib
    );
    doc
}

#[test]
fn every_broken_input_gives_its_expected_result() {
    let rows = rows();
    assert!(rows.len() >= 20, "the corpus lost rows");
    eprintln!("| file | exit | message | peak RSS MiB | cap MiB |\n|---|---|---|---|---|");
    let big_dir = std::env::temp_dir().join(format!("sctp-broken-big-{}", std::process::id()));
    std::fs::create_dir_all(&big_dir).unwrap();
    for row in &rows {
        let big = row.file.strip_suffix(" (big)");
        let path = if let Some(name) = big {
            let p = big_dir.join(name);
            let bytes = match name {
                "sctp_100k_chunks.pcapng" => big_100k_chunks(),
                "vtags_1m.pcap" => big_vtags(1_000_000),
                other => panic!("no builder for the big case {other}"),
            };
            std::fs::write(&p, bytes).unwrap();
            p
        } else {
            corpus_dir().join(&row.file)
        };
        assert!(path.exists(), "{} missing: run generate.py", path.display());
        let doc = check(row, &path);
        if big == Some("sctp_100k_chunks.pcapng") {
            // Every one of the 100,000 chunks of the one packet is counted.
            let a = &doc["captures"][0]["associations"][0];
            assert_eq!(a["chunks"]["DATA"], 100_000);
            assert_eq!(doc["captures"][0]["bad_checksums"], 0);
        }
        if big.is_some() {
            let _ = std::fs::remove_file(&path);
        }
    }
    let _ = std::fs::remove_dir_all(&big_dir);
}
