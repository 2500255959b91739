//! Writes the many-association capture of the scale tests (issue 16 part 1) for the benchmark
//! (`bench/dashboard.sh --many`) and the browser tests.
//!
//! Usage: cargo run --release -p dashboard --example many_associations -- OUT.pcap [N]

#[path = "../tests/pages_common/many.rs"]
mod many;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(out) = args.get(1) else {
        eprintln!("usage: many_associations OUT.pcap [ASSOCIATIONS (default 10000)]");
        std::process::exit(2);
    };
    let n = args.get(2).map_or(10_000, |s| s.parse().expect("a number"));
    let bytes = many::many_associations(n);
    std::fs::write(out, &bytes).expect("writing the capture");
    eprintln!("wrote {out}: {} bytes, {n} associations", bytes.len());
}
