//! Runs the analysis pass over one capture and prints what it found and how long it took, with
//! no output writing and without polars (builds in a fraction of the CLI's time): the quick loop
//! for profiling the pass (`perf record`), not a benchmark (use bench/compare.sh for those).
//!
//! Usage: cargo run --release --no-default-features --features mimalloc --example time_pass --
//! CAPTURE [--no-tcp] [--jobs 1] [--only read|decode|crc]
//!
//! `--only` times a prefix of the reading stage alone, on one thread: the capture records
//! (`read`), plus link / IP decoding (`decode`), plus the SCTP CRC32c (`crc`).

use std::time::Instant;

// The CLI's allocator, so that the pass is timed as the CLI runs it.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: analyzer::alloc::MiMalloc = analyzer::alloc::MiMalloc;

use analyzer::analyze::{analyze_file_streaming, Ended, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "mimalloc")]
    analyzer::alloc::tune(false);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: time_pass CAPTURE [--no-tcp] [--jobs 1] [--only read|decode|crc]");
        std::process::exit(2);
    };
    if let Some(w) = args.windows(2).find(|w| w[0] == "--only") {
        return read_only(path, &w[1]);
    }
    let opts = Options {
        tcp: !args.iter().any(|a| a == "--no-tcp"),
        pipeline: !args.windows(2).any(|w| w[0] == "--jobs" && w[1] == "1"),
        keep_rows: false,
        ..Options::default()
    };
    let t0 = Instant::now();
    let (mut ended, mut retired) = (0u64, 0u64);
    let mut emit = |e: Ended| match e {
        Ended::Assoc(_) => ended += 1,
        Ended::Tcp(_) => retired += 1,
    };
    let a = analyze_file_streaming(path.as_ref(), &opts, &mut |_| {}, &mut emit)?;
    let dt = t0.elapsed().as_secs_f64();
    println!(
        "{path}: {} packets ({} SCTP, {} TCP), {} associations ({ended} ended), {} TCP flows ({retired} retired), {:.3} s, {:.2} Mpkt/s",
        a.packets,
        a.sctp_packets,
        a.tcp_packets,
        a.associations.len() as u64 + ended,
        a.tcp_flows.len() as u64 + retired,
        dt,
        a.packets as f64 / dt / 1e6
    );
    Ok(())
}

/// Walks the capture through the first steps of the reading stage only.
fn read_only(path: &str, only: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (decode, crc) = match only {
        "read" => (false, false),
        "decode" => (true, false),
        "crc" => (true, true),
        other => return Err(format!("--only {other}: read, decode or crc").into()),
    };
    let t0 = Instant::now();
    let mut reader = analyzer::capture::CaptureReader::open(path.as_ref())?;
    let mut net = analyzer::net::NetDecoder::new();
    // Folded into the output so that nothing is optimised away.
    let (mut frames, mut fold) = (0u64, 0u64);
    while let Some(frame) = reader.next_frame() {
        frames += 1;
        fold += if !decode {
            frame.data.len() as u64
        } else {
            match net.decode(&frame) {
                Ok(Some(ip)) if crc && ip.proto == 132 => {
                    u64::from(analyzer::sctp::crc32c::verify(&ip.payload))
                }
                Ok(Some(ip)) => ip.payload.len() as u64,
                _ => 0,
            }
        };
    }
    let dt = t0.elapsed().as_secs_f64();
    println!(
        "{path}: --only {only}: {frames} frames ({fold}), {dt:.3} s, {:.2} Mpkt/s",
        frames as f64 / dt / 1e6
    );
    Ok(())
}
