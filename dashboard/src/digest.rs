//! What the dashboard keeps in memory of an analysed capture (issue 19: memory flat in the
//! capture size): the report without its associations (`head`: counters, warnings, accounting,
//! TCP flows, comparison rows), one list row per association, the capture-wide figures the
//! pages show, and where each association's JSON sits in the stored `report.json`. A page that
//! shows one association reads that association from the file (`Digest::read_assoc`).
//!
//! `DigestWriter` makes both during the summary pass: each association is written to
//! `report.json` the moment it ends (in id order, as the CLI's `--format json` streams them) and
//! then dropped; the digest is stored beside the report as `digest.json`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use analyzer::compare::ComparisonRow;
use analyzer::report::{AssocReport, CaptureReport};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::assoc_list::{self, AssocSummary};
use crate::lifecycle::EndsAcc;

/// Largest association JSON read back (a guard against a damaged digest, not a limit the
/// analyzer reaches: its event and timeout lists are bounded).
const MAX_ASSOC_JSON: u64 = 256 << 20;

/// The in-memory part of an analysed capture (see the module doc).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Digest {
    /// The report with `associations` empty.
    pub head: CaptureReport,
    /// One row per association, in id order.
    pub rows: Vec<AssocSummary>,
    /// Per row, the analyzer's words on how it ended, endpoints named (the "Ended" tooltip).
    pub end_titles: Vec<String>,
    /// Per row, (byte offset, length) of the association's JSON in `report.json`.
    pub spans: Vec<(u64, u64)>,
    /// End kinds and their causes, over the associations.
    pub ends: EndsAcc,
    /// Associations per upper layer (those with one).
    pub uppers: BTreeMap<String, usize>,
    pub retransmissions: u64,
    pub failovers: u64,
    pub spurious_failovers: u64,
    /// Id of the first association with a failover that is not spurious / a spurious one.
    pub first_failover: Option<usize>,
    pub first_spurious: Option<usize>,
}

impl Digest {
    fn new(head: CaptureReport) -> Digest {
        Digest {
            head,
            rows: Vec::new(),
            end_titles: Vec::new(),
            spans: Vec::new(),
            ends: EndsAcc::default(),
            uppers: BTreeMap::new(),
            retransmissions: 0,
            failovers: 0,
            spurious_failovers: 0,
            first_failover: None,
            first_spurious: None,
        }
    }

    /// The figures of a whole report in memory (no file behind it: every span is empty, so
    /// `read_assoc` fails).
    pub fn of_report(r: &CaptureReport) -> Digest {
        let mut d = Digest::new(CaptureReport {
            associations: Vec::new(),
            ..r.clone()
        });
        for a in &r.associations {
            d.add(a, (0, 0));
        }
        d
    }

    /// Counts `a` in (its JSON at `span` of the report file).
    fn add(&mut self, a: &AssocReport, span: (u64, u64)) {
        let s = assoc_list::summary(a);
        self.retransmissions += s.retransmissions;
        for f in a.directions.iter().flat_map(|d| &d.failovers) {
            self.failovers += 1;
            if f.spurious {
                self.spurious_failovers += 1;
                self.first_spurious.get_or_insert(a.id);
            } else {
                self.first_failover.get_or_insert(a.id);
            }
        }
        if let Some(n) = &s.upper_layer {
            *self.uppers.entry(n.clone()).or_insert(0) += 1;
        }
        self.ends.add(a);
        self.end_titles.push(crate::lifecycle::ended(a).title);
        self.rows.push(s);
        self.spans.push(span);
    }

    /// Whether its per-association lists agree (a digest read back from disk).
    pub fn consistent(&self) -> bool {
        self.spans.len() == self.rows.len()
            && self.end_titles.len() == self.rows.len()
            && self.rows.windows(2).all(|w| w[0].id < w[1].id)
    }

    /// Associations of the capture.
    pub fn associations(&self) -> usize {
        self.rows.len()
    }

    /// Position in `rows` of the association whose id is `n` (ids are the positions, but do
    /// not rely on it: rows are in id order).
    pub fn position(&self, n: usize) -> Option<usize> {
        match self.rows.get(n) {
            Some(r) if r.id == n => Some(n),
            _ => self.rows.binary_search_by_key(&n, |r| r.id).ok(),
        }
    }

    /// Counts shown in the captures list (TCP flows, associations per end kind).
    pub fn summary_json(&self) -> Value {
        let r = &self.head;
        json!({
            "packets": r.packets,
            "associations": self.rows.len(),
            "tcp_flows": crate::views::tcp_flow_count(r),
            "failovers": self.failovers,
            "spurious_failovers": self.spurious_failovers,
            "association_ends": r.accounting.association_ends,
        })
    }

    /// The JSON bytes of the associations at positions `range`, as stored.
    pub fn read_raw(
        &self,
        report: &Path,
        range: std::ops::Range<usize>,
    ) -> io::Result<Vec<Vec<u8>>> {
        let mut f = File::open(report)?;
        let mut out = Vec::with_capacity(range.len());
        for i in range {
            out.push(self.read_span(&mut f, i)?);
        }
        Ok(out)
    }

    fn read_span(&self, f: &mut File, i: usize) -> io::Result<Vec<u8>> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        let &(off, len) = self
            .spans
            .get(i)
            .ok_or_else(|| bad("no such association"))?;
        if len == 0 || len > MAX_ASSOC_JSON {
            return Err(bad(
                "the digest does not say where this association is stored",
            ));
        }
        f.seek(SeekFrom::Start(off))?;
        let mut buf = vec![0; len as usize];
        f.read_exact(&mut buf)?;
        Ok(buf)
    }

    /// The full report of the association at position `i`, read from `report`.
    pub fn read_assoc(&self, report: &Path, i: usize) -> io::Result<AssocReport> {
        let mut f = File::open(report)?;
        self.parse_at(&mut f, i)
    }

    fn parse_at(&self, f: &mut File, i: usize) -> io::Result<AssocReport> {
        let buf = self.read_span(f, i)?;
        let a: AssocReport = serde_json::from_slice(&buf)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let want = self.rows.get(i).map(|r| r.id);
        if Some(a.id) != want {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("stored association {} where {want:?} was expected", a.id),
            ));
        }
        Ok(a)
    }

    /// Calls `f` with each association from the first, one at a time, until it returns false.
    pub fn each_assoc(
        &self,
        report: &Path,
        mut f: impl FnMut(AssocReport) -> bool,
    ) -> io::Result<()> {
        let mut file = File::open(report)?;
        for i in 0..self.rows.len() {
            if !f(self.parse_at(&mut file, i)?) {
                break;
            }
        }
        Ok(())
    }
}

/// Counts the bytes written through it.
struct Counting<W: Write> {
    inner: W,
    n: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes `report.json` as the summary pass ends associations, and gathers the digest.
pub struct DigestWriter<W: Write> {
    out: Counting<BufWriter<W>>,
    digest: Digest,
    /// Associations that ended before an earlier one (written in id order).
    pending: BTreeMap<usize, AssocReport>,
    next: usize,
    /// Comparison rows of the written associations (the analyzer's `compare::rows`), before
    /// the TCP ones.
    sctp_rows: Vec<ComparisonRow>,
    error: Option<io::Error>,
}

impl<W: Write> DigestWriter<W> {
    pub fn new(out: W) -> DigestWriter<W> {
        let mut out = Counting {
            inner: BufWriter::with_capacity(1 << 20, out),
            n: 0,
        };
        let error = out.write_all(b"{\"associations\":[").err();
        DigestWriter {
            out,
            digest: Digest::new(CaptureReport::failed("", String::new())),
            pending: BTreeMap::new(),
            next: 0,
            sctp_rows: Vec::new(),
            error,
        }
    }

    /// An association ended: written now, or once those before it are.
    pub fn ended(&mut self, a: AssocReport) {
        self.pending.insert(a.id, a);
        self.flush(false);
    }

    fn flush(&mut self, all: bool) {
        while let Some(e) = self.pending.first_entry() {
            if !all && *e.key() != self.next {
                break;
            }
            let a = e.remove();
            self.next = a.id + 1;
            self.write(a);
        }
    }

    fn write(&mut self, a: AssocReport) {
        if self.error.is_some() {
            return;
        }
        let r = (|| {
            if !self.digest.rows.is_empty() {
                self.out.write_all(b",")?;
            }
            let start = self.out.n;
            serde_json::to_writer(&mut self.out, &a).map_err(io::Error::other)?;
            Ok((start, self.out.n - start))
        })();
        match r {
            Ok(span) => {
                self.sctp_rows
                    .extend(analyzer::compare::rows(std::slice::from_ref(&a), &[]));
                self.digest.add(&a, span);
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// Ends the report with `report` (the pass's `CaptureReport::from_streamed` without the
    /// ended associations: those still open at the end are in it and written here; its
    /// comparison rows are made again over every association); returns the writer and the
    /// digest.
    pub fn finish(mut self, mut report: CaptureReport) -> io::Result<(W, Digest)> {
        for a in std::mem::take(&mut report.associations) {
            self.pending.insert(a.id, a);
        }
        self.flush(true);
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let mut rows = std::mem::take(&mut self.sctp_rows);
        rows.extend(analyzer::compare::rows(&[], &report.tcp_flows));
        report.comparison = rows;
        // The other fields as serde writes them, less the empty `associations` written above.
        let head = serde_json::to_vec(&report).map_err(io::Error::other)?;
        let head = without_associations(&head).ok_or_else(|| {
            io::Error::other("the report's fields could not be joined to its associations")
        })?;
        self.out.write_all(b"],")?;
        self.out.write_all(&head[1..])?;
        let out = self.out.inner.into_inner().map_err(|e| e.into_error())?;
        self.digest.head = report;
        Ok((out, self.digest))
    }
}

/// `{"a":1,"associations":[],"b":2}` without its (first, top-level: earlier fields are numbers
/// and strings, in which a quote is escaped) `"associations":[]` member.
fn without_associations(json: &[u8]) -> Option<Vec<u8>> {
    const MEMBER: &[u8] = b"\"associations\":[]";
    let at = json.windows(MEMBER.len()).position(|w| w == MEMBER)?;
    let (mut from, mut to) = (at, at + MEMBER.len());
    if json.get(to) == Some(&b',') {
        to += 1;
    } else if at > 0 && json[at - 1] == b',' {
        from -= 1;
    }
    let mut out = Vec::with_capacity(json.len());
    out.extend_from_slice(&json[..from]);
    out.extend_from_slice(&json[to..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer::analyze::{self, Ended, Options};
    use analyzer::capture::CaptureReader;

    fn sample(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../sample-traces")
            .join(name)
    }

    /// The streamed `report.json` and digest of a capture, and the report as the dashboard
    /// made it before (`from_streamed` over every ended association).
    fn both(name: &str) -> (Vec<u8>, Digest, CaptureReport) {
        let opts = Options {
            keep_rows: false,
            keep_chunks: false,
            ..Options::default()
        };
        let mut w = DigestWriter::new(Vec::new());
        let mut flows = Vec::new();
        let reader = CaptureReader::open(&sample(name)).unwrap();
        let c =
            analyze::analyze_reader_progress(name, reader, &opts, &mut |_| {}, &mut |e| match e {
                Ended::Assoc(a) => w.ended(a),
                Ended::Tcp(f) => flows.push(f),
            });
        let (bytes, digest) = w
            .finish(CaptureReport::from_streamed(&c, Vec::new(), flows))
            .unwrap();
        let (mut assocs, mut flows) = (Vec::new(), Vec::new());
        let reader = CaptureReader::open(&sample(name)).unwrap();
        let c =
            analyze::analyze_reader_progress(name, reader, &opts, &mut |_| {}, &mut |e| match e {
                Ended::Assoc(a) => assocs.push(a),
                Ended::Tcp(f) => flows.push(f),
            });
        (
            bytes,
            digest,
            CaptureReport::from_streamed(&c, assocs, flows),
        )
    }

    #[test]
    fn the_streamed_report_is_the_whole_report() {
        for name in [
            "cut_p20_sack40_sender.pcap",
            "mixed_p20_cut5_rec8_sender.pcap",
            "spur_pmr1_rtomin30_sender.pcap",
        ] {
            let (bytes, d, whole) = both(name);
            let got: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(got, serde_json::to_value(&whole).unwrap(), "{name}");
            assert_eq!(d.rows.len(), whole.associations.len());
            assert!(!d.rows.is_empty(), "{name}");
            let of = Digest::of_report(&whole);
            assert_eq!(d.summary_json(), of.summary_json(), "{name}");
            assert_eq!(d.head, of.head, "{name}");
            // Each span is that association's JSON.
            for (i, a) in whole.associations.iter().enumerate() {
                let (o, l) = d.spans[i];
                let one: AssocReport =
                    serde_json::from_slice(&bytes[o as usize..(o + l) as usize]).unwrap();
                assert_eq!(&one, a, "{name} #{i}");
            }
        }
    }

    #[test]
    fn the_study_samples_of_a_report_on_disk_are_those_of_the_whole_report() {
        // SCTP and TCP side by side: both kinds of rows.
        for name in [
            "mixed_p20_cut5_rec8_sender.pcap",
            "cut_p20_sack40_sender.pcap",
        ] {
            let (bytes, d, whole) = both(name);
            let tmp = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(tmp.path(), &bytes).unwrap();
            let mut got = Vec::new();
            crate::studies::disk_samples(&d, tmp.path(), &mut |s| got.extend(s)).unwrap();
            let want = analyzer::study::samples(&whole, &Default::default());
            assert!(want.iter().any(|s| s.transport == "sctp"), "{name}");
            let key = |s: &analyzer::study::Sample| format!("{s:?}");
            let (mut got, mut want): (Vec<_>, Vec<_>) = (
                got.iter().map(key).collect(),
                want.iter().map(key).collect(),
            );
            got.sort();
            want.sort();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn associations_are_read_back_from_the_file_and_damage_is_an_error() {
        let (bytes, d, whole) = both("cut_p20_sack40_sender.pcap");
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), &bytes).unwrap();
        let last = whole.associations.len() - 1;
        assert_eq!(
            d.read_assoc(tmp.path(), last).unwrap(),
            whole.associations[last]
        );
        assert_eq!(d.position(last), Some(last));
        assert_eq!(d.position(last + 1), None);
        let mut seen = 0;
        d.each_assoc(tmp.path(), |a| {
            assert_eq!(a, whole.associations[seen]);
            seen += 1;
            true
        })
        .unwrap();
        assert_eq!(seen, whole.associations.len());
        // A span that points elsewhere, a file cut short: errors, no panic.
        let mut bad = d.clone();
        bad.spans[0].0 += 1;
        assert!(bad.read_assoc(tmp.path(), 0).is_err());
        assert!(d.consistent());
        bad.spans.push((0, 10));
        assert!(!bad.consistent());
        assert!(bad.read_assoc(tmp.path(), last + 1).is_err());
        std::fs::write(tmp.path(), &bytes[..bytes.len() / 2]).unwrap();
        assert!(d.read_assoc(tmp.path(), last).is_err());
        assert!(d.read_assoc(tmp.path(), last + 1).is_err());
    }

    #[test]
    fn the_associations_member_is_cut_out() {
        assert_eq!(
            without_associations(br#"{"a":"\"associations\":[]","associations":[],"b":2}"#)
                .unwrap(),
            br#"{"a":"\"associations\":[]","b":2}"#.to_vec()
        );
        assert_eq!(
            without_associations(br#"{"a":1,"associations":[]}"#).unwrap(),
            br#"{"a":1}"#.to_vec()
        );
        assert!(without_associations(br#"{"a":1}"#).is_none());
    }
}
