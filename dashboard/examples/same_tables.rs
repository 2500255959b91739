//! Checks that two directories of Parquet tables hold the same tables with the same rows (in any
//! order): the dashboard's streamed tables against the CLI's `--format parquet --out DIR`
//! (`bench/dashboard.sh --issue19`). Prints one line per table; exit status 1 on a difference.
//!
//! Usage: cargo run --release -p dashboard --example same_tables -- CLI_DIR DASHBOARD_DIR

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: same_tables CLI_DIR DASHBOARD_DIR");
        return ExitCode::from(2);
    }
    let (a, b) = (Path::new(&args[1]), Path::new(&args[2]));
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".parquet"))
            .collect();
        v.sort();
        v
    };
    let (na, nb) = (names(a), names(b));
    let mut ok = !na.is_empty();
    if na != nb {
        println!("different tables: {na:?} vs {nb:?}");
        ok = false;
    }
    for n in na.iter().filter(|n| nb.contains(n)) {
        match analyzer::frames::same_rows(&a.join(n), &b.join(n)) {
            Ok(Ok(rows)) => println!("{n:<28} same rows ({rows})"),
            Ok(Err(why)) => {
                println!("{n:<28} DIFFERENT: {why}");
                ok = false;
            }
            Err(e) => {
                println!("{n:<28} unreadable: {e}");
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
