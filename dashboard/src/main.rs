//! Web dashboard for the SCTP trace analyzer (the web work is issue 5; this binary only links the library for now).
fn main() {
    eprintln!("sctp-dashboard: not built yet (see issue 5); use `sctp-analyzer analyze`");
    std::process::exit(2);
}
