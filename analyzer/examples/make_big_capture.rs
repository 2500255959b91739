//! Builds a large classic pcap for benchmarks by repeating a source capture (`analyzer::synth`:
//! shifted times, SCTP tags and ports with CRC32c recomputed, TCP ports), so every copy is its
//! own association or connection. Deterministic: the same inputs give the same bytes.
//!
//! Usage: cargo run --release --example make_big_capture -- SOURCE.pcap OUT.pcap TARGET_MB
//! (TARGET_MB may be fractional: 0.5 for 512 KiB).

use std::fs::File;
use std::io::{BufWriter, Write};

use analyzer::synth::Source;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: make_big_capture SOURCE.pcap OUT.pcap TARGET_MB");
        std::process::exit(2);
    }
    let target = (args[3].parse::<f64>()? * (1u64 << 20) as f64) as u64;
    let src = Source::open(std::path::Path::new(&args[1]))?;
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&args[2])?);
    let (bytes, frames, copies) = src.write(&mut out, target)?;
    out.flush()?;
    eprintln!("wrote {} MB, {frames} frames, {copies} copies", bytes >> 20);
    Ok(())
}
