//! Runs the analysis pass over one capture and prints what it found and how long it took, with
//! no output writing and without polars (builds in a fraction of the CLI's time): the quick loop
//! for profiling the pass (`perf record`), not a benchmark (use bench/compare.sh for those).
//!
//! Usage: cargo run --release --no-default-features --features mimalloc --example time_pass --
//! CAPTURE [--no-tcp] [--jobs 1]

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
        eprintln!("usage: time_pass CAPTURE [--no-tcp] [--jobs 1]");
        std::process::exit(2);
    };
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
