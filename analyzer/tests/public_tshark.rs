//! Per-type chunk totals and association counts on the public captures of `../shared`, checked
//! against tshark (skipped when `../shared` or tshark is absent).

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

use analyzer::sctp::chunk_type_name;

/// Captures where our association count differs from tshark's association index, and why.
const ASSOC_DIFFERENCES: &[(&str, &str)] = &[
    (
        "aboutsip__pkts__sctp_init_collision.cap",
        "INIT collision (RFC 9260 5.2.1): both INITs' tags become the tags of one association, \
         so the colliding INIT and its peer's are one association here; tshark indexes them apart",
    ),
    (
        "arkime__arkime__m3ua_synthetic.pcap",
        "synthetic: every verification tag is 0 and two host pairs reuse the same ports and \
         initiate tags; tshark merges the host pairs, we keep different hosts apart",
    ),
    (
        "OISF__suricata-verify__sctp-max-chunks.pcap",
        "crafted: one packet of ABORT chunks that matches no association is out of the blue \
         (RFC 9260 8.4 rule 2) and goes to the capture's unassociated record; tshark indexes it",
    ),
    (
        "pevma__mrp__sctp.pcap",
        "fuzzed: random ports and tags in every packet; tshark gives malformed packets no \
         association index at all",
    ),
];

/// tshark's chunk totals by type name over every SCTP frame of `path` (not those quoted in ICMP
/// errors), and its association count.
pub(crate) fn tshark_counts(path: &std::path::Path) -> (BTreeMap<String, u64>, usize) {
    // SCTP chunks quoted inside ICMP errors are not SCTP traffic (ip-frag.pcap has three).
    let out = Command::new("tshark")
        .args(["-r"])
        .arg(path)
        .args([
            "-o",
            "sctp.association_index:TRUE",
            "-Y",
            "sctp && !icmp && !icmpv6",
            "-T",
            "fields",
            "-e",
            "sctp.chunk_type",
            "-e",
            "sctp.assoc_index",
        ])
        .output()
        .expect("tshark runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut counts = BTreeMap::new();
    let mut assocs = std::collections::BTreeSet::new();
    for line in text.lines() {
        let mut parts = line.split('\t');
        for t in parts
            .next()
            .unwrap_or("")
            .split(',')
            .filter(|s| !s.is_empty())
        {
            let t: u8 = t.parse().unwrap();
            *counts.entry(chunk_type_name(t).into_owned()).or_insert(0) += 1;
        }
        for i in parts
            .next()
            .unwrap_or("")
            .split(',')
            .filter(|s| !s.is_empty())
        {
            assocs.insert(i.to_string());
        }
    }
    (counts, assocs.len())
}

#[test]
fn chunk_totals_and_associations_match_tshark() {
    let Some(shared) = common::shared_dir() else {
        eprintln!("../shared absent: skipped");
        return;
    };
    if common::tshark().is_none() {
        eprintln!("tshark absent: skipped");
        return;
    }
    let mut files: Vec<_> = std::fs::read_dir(shared.join("captures/public"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            !(n.ends_with(".md") || n.ends_with(".tsv") || n.ends_with(".sh"))
        })
        .collect();
    files.sort();
    let mut failures = Vec::new();
    println!(
        "{:<60} {:>8} {:>8} {:>7} {:>7}  note",
        "capture", "chunks", "tshark", "assocs", "tshark"
    );
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let (_, r) = common::analyze(f);
        // Capture totals: the associations' chunks + the unassociated ones + the duplicates'.
        let ours = r.accounting.chunk_totals.clone();
        let mut parts: BTreeMap<String, u64> = BTreeMap::new();
        for m in r.associations.iter().map(|a| &a.chunks).chain([
            &r.accounting.unassociated.chunks,
            &r.accounting.duplicate_chunks,
        ]) {
            for (k, v) in m {
                *parts.entry(k.clone()).or_insert(0) += v;
            }
        }
        assert_eq!(
            parts, ours,
            "{name}: chunk_totals is not the sum of its parts"
        );
        // Every SCTP packet once: in an association, unassociated, or a duplicate.
        let in_assocs: u64 = r.associations.iter().map(|a| a.packets).sum();
        assert_eq!(
            r.sctp_packets,
            in_assocs + r.accounting.unassociated.packets + r.accounting.duplicate_frames,
            "{name}: sctp_packets"
        );
        let (theirs, t_assocs) = tshark_counts(f);
        let note = ASSOC_DIFFERENCES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, why)| *why);
        println!(
            "{:<60} {:>8} {:>8} {:>7} {:>7}  {}",
            name,
            ours.values().sum::<u64>(),
            theirs.values().sum::<u64>(),
            r.associations.len(),
            t_assocs,
            note.map(|n| &n[..n.len().min(60)]).unwrap_or("")
        );
        if ours != theirs {
            failures.push(format!(
                "{name}: chunk totals differ: ours {ours:?} tshark {theirs:?}"
            ));
        }
        if r.associations.len() != t_assocs && note.is_none() {
            failures.push(format!(
                "{name}: {} associations, tshark {t_assocs}",
                r.associations.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
