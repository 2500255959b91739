//! Robustness: the whole analyzer on randomly corrupted and truncated real captures never
//! panics and always returns an analysis (problems become warnings).

use crate::common;

use analyzer::analyze::{analyze_reader, Options};
use analyzer::capture::CaptureReader;
use analyzer::report::CaptureReport;

/// xorshift64*: deterministic, no dependency.
fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed >> 12;
    *seed ^= *seed << 25;
    *seed ^= *seed >> 27;
    seed.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

#[test]
fn corrupted_captures_never_panic() {
    let mut seed = std::env::var("MUTATION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_0001u64);
    let mut runs = 0;
    for name in [
        "cut_p20_sack40_sender.pcap",
        "fmt_pcapng_sender.pcapng",
        "spur_pmr1_rtomin30_receiver.pcap",
        "fmt_sll2_sender.pcap",
    ] {
        let original = std::fs::read(common::samples_dir().join(name)).unwrap();
        for round in 0..250 {
            let mut bytes = original.clone();
            // Flip bytes past the file header (which would only give a fatal header error).
            let flips = 1 + (rng(&mut seed) % 64) as usize;
            for _ in 0..flips {
                let i = 32 + (rng(&mut seed) as usize) % (bytes.len() - 32);
                bytes[i] ^= (rng(&mut seed) % 255 + 1) as u8;
            }
            if round % 4 == 0 {
                let cut = 32 + (rng(&mut seed) as usize) % (bytes.len() - 32);
                bytes.truncate(cut);
            }
            let Ok(reader) = CaptureReader::from_read(Box::new(std::io::Cursor::new(bytes))) else {
                continue;
            };
            let opts = Options {
                keep_chunks: round % 2 == 0,
                ..Options::default()
            };
            let c = analyze_reader(name, reader, &opts, &mut |_| {});
            let r = CaptureReport::from_analysis(&c);
            serde_json::to_string(&r).unwrap();
            runs += 1;
        }
    }
    assert!(runs > 900, "{runs}");
}
