//! The association and path rows' hand-written `Serialize` (the JSON of `#[serde(flatten)]`
//! without serde's map path, `analyzer::inline_fields`): on every top-level sample capture each
//! association's JSON reads back into an equal report (no field left out, renamed or moved into
//! another), and the streamed report's writer gives serde_json's bytes.

use analyzer::report::AssocReport;

use crate::common::{analyze, samples_dir};

#[test]
fn reports_round_trip() {
    let mut files: Vec<_> = std::fs::read_dir(samples_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    files.sort();
    assert!(files.len() > 20, "sample captures: {}", files.len());
    let mut rows = 0;
    for f in &files {
        let (_, r) = analyze(f);
        for a in &r.associations {
            // The fields read with a default when absent get other values than their defaults,
            // so that one left out of the JSON cannot read back equal.
            let mut a = a.clone();
            a.duplicate_frames += 1 + a.id as u64;
            a.stalled = !a.stalled;
            let a = &a;
            let text = serde_json::to_string(a).unwrap();
            let ours = analyzer::json_write::to_vec(a).unwrap();
            assert_eq!(String::from_utf8(ours).unwrap(), text, "{}", f.display());
            let back: AssocReport = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: association {}: {e}", f.display(), a.id));
            // f64 fields compare by their JSON (a NaN is written as null, read back as missing).
            assert_eq!(
                serde_json::to_string(&back).unwrap(),
                text,
                "{}: association {}",
                f.display(),
                a.id
            );
            assert_eq!(&back, a, "{}: association {}", f.display(), a.id);
            rows += 1;
        }
    }
    assert!(rows > 20, "associations: {rows}");
    eprintln!("{} captures, {rows} associations read back", files.len());
}
