//! Tables written while the pass runs (`analyze::RowSink`): each table is a Parquet file fed in
//! row groups as associations end and chunk rows arrive, so memory holds one row group per table
//! at most, never a whole table. The rows are those of `capture_tables` for the same capture;
//! only their order differs: an association's rows come when it ends (ended associations first,
//! in the order they ended, then those open at the end by id), and the `comparison` table lists
//! the SCTP rows in that order before the TCP ones. `chunks` keeps capture order.

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::analyze::{CaptureAnalysis, PassProgress, RowSink, TimeBase};
use crate::assoc::accounting::CaptureAccounting;
use crate::assoc::Association;
use crate::capture::CaptureFormat;
use crate::chunk_rows::ChunkRows;
use crate::tcp::TcpFlow;

/// Rows buffered per table before they are written as one row group.
const ROW_GROUP: usize = 1 << 16;
/// Ended associations (or their packets) gathered before their tables are built at once.
const ASSOC_BATCH: usize = 256;
const ASSOC_BATCH_PACKETS: u64 = 200_000;

/// One table's open Parquet file and the rows waiting for the next row group.
struct Sink {
    name: &'static str,
    writer: Option<polars::io::parquet::write::BatchedWriter<File>>,
    pending: Option<DataFrame>,
    rows: u64,
}

/// Writes the tables of one capture into a directory, `<name>.parquet` each (see the module).
pub struct TableStream {
    dir: PathBuf,
    file: String,
    sinks: Vec<Sink>,
    assocs: Vec<Association>,
    assoc_packets: u64,
    tcp: Vec<TcpFlow>,
    first_ns: Option<i64>,
    /// The first error met; the sink methods of `RowSink` cannot return it.
    error: Option<PolarsError>,
    progress: Option<Box<dyn FnMut(PassProgress) + Send>>,
}

/// A capture analysis holding only `associations`, `tcp_flows` or `chunks` of a batch, for the
/// table builders of this module's parent.
fn shell(
    file: &str,
    first_ns: Option<i64>,
    associations: Vec<Association>,
    tcp_flows: Vec<TcpFlow>,
    chunks: Option<ChunkRows>,
) -> CaptureAnalysis {
    CaptureAnalysis {
        emitted: 0,
        emitted_tcp: 0,
        file: file.to_string(),
        format: CaptureFormat::Pcap,
        compression: None,
        packets: 0,
        sctp_packets: 0,
        tcp_packets: 0,
        bad_checksums: 0,
        warnings: Vec::new(),
        first_ns,
        last_ns: None,
        associations,
        chunks,
        tcp_flows,
        accounting: CaptureAccounting::default(),
        files: Vec::new(),
        gaps: Vec::new(),
    }
}

impl TableStream {
    /// Tables of capture `file` (the `capture` column) go to `dir`, which must exist.
    pub fn new(dir: &Path, file: &str) -> TableStream {
        TableStream {
            dir: dir.to_path_buf(),
            file: file.to_string(),
            sinks: Vec::new(),
            assocs: Vec::new(),
            assoc_packets: 0,
            tcp: Vec::new(),
            first_ns: None,
            error: None,
            progress: None,
        }
    }

    /// Also calls `f` with the pass's progress.
    pub fn on_progress(&mut self, f: impl FnMut(PassProgress) + Send + 'static) {
        self.progress = Some(Box::new(f));
    }

    /// Rows written so far, per table.
    pub fn rows_written(&self) -> Vec<(&'static str, u64)> {
        self.sinks.iter().map(|s| (s.name, s.rows)).collect()
    }

    fn sink(&mut self, name: &'static str) -> &mut Sink {
        let i = match self.sinks.iter().position(|s| s.name == name) {
            Some(i) => i,
            None => {
                self.sinks.push(Sink {
                    name,
                    writer: None,
                    pending: None,
                    rows: 0,
                });
                self.sinks.len() - 1
            }
        };
        &mut self.sinks[i]
    }

    /// Adds the rows of `df` to table `name`, writing a row group when enough wait.
    fn add(&mut self, name: &'static str, df: DataFrame) -> PolarsResult<()> {
        let dir = self.dir.clone();
        let s = self.sink(name);
        if s.writer.is_none() {
            let f = File::create(dir.join(format!("{name}.parquet")))?;
            s.writer = Some(ParquetWriter::new(f).batched(df.schema())?);
        }
        if df.height() == 0 {
            return Ok(());
        }
        s.rows += df.height() as u64;
        match &mut s.pending {
            Some(p) => {
                p.vstack_mut(&df)?;
            }
            None => s.pending = Some(df),
        }
        if s.pending.as_ref().is_some_and(|p| p.height() >= ROW_GROUP) {
            s.flush()?;
        }
        Ok(())
    }

    /// Adds every table of `c` except those that are empty and already open.
    fn add_tables(&mut self, c: &CaptureAnalysis) -> PolarsResult<()> {
        for t in super::capture_tables(c)? {
            let open = self
                .sinks
                .iter()
                .any(|s| s.name == t.name && s.writer.is_some());
            if t.df.height() > 0 || !open {
                self.add(t.name, t.df)?;
            }
        }
        Ok(())
    }

    fn flush_assocs(&mut self) -> PolarsResult<()> {
        if self.assocs.is_empty() && self.tcp.is_empty() {
            return Ok(());
        }
        let c = shell(
            &self.file,
            self.first_ns,
            std::mem::take(&mut self.assocs),
            std::mem::take(&mut self.tcp),
            None,
        );
        self.assoc_packets = 0;
        self.add_tables(&c)
    }

    /// Writes what the pass left (`c`: the open associations and connections, the last chunk
    /// rows) and closes every file. Returns the rows of each table.
    pub fn finish(mut self, c: &CaptureAnalysis) -> PolarsResult<Vec<(&'static str, u64)>> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.flush_assocs()?;
        self.add_tables(c)?;
        for s in &mut self.sinks {
            s.flush()?;
            if let Some(w) = s.writer.take() {
                w.finish()?;
            }
        }
        Ok(self.rows_written())
    }

    fn keep(&mut self, r: PolarsResult<()>) {
        if let Err(e) = r {
            if self.error.is_none() {
                self.error = Some(e);
            }
        }
    }
}

impl Sink {
    fn flush(&mut self) -> PolarsResult<()> {
        if let (Some(mut df), Some(w)) = (self.pending.take(), self.writer.as_mut()) {
            df.rechunk_mut_par();
            w.write_batch(&df)?;
        }
        Ok(())
    }
}

impl RowSink for TableStream {
    fn association(&mut self, time: TimeBase, assoc: Box<Association>) {
        if self.error.is_some() {
            return;
        }
        self.first_ns = time.first_ns;
        self.assoc_packets += assoc.packets;
        self.assocs.push(*assoc);
        if self.assocs.len() >= ASSOC_BATCH || self.assoc_packets >= ASSOC_BATCH_PACKETS {
            let r = self.flush_assocs();
            self.keep(r);
        }
    }

    fn tcp_flow(&mut self, time: TimeBase, flow: Box<TcpFlow>) {
        if self.error.is_some() {
            return;
        }
        self.first_ns = time.first_ns;
        self.tcp.push(*flow);
        if self.tcp.len() >= ASSOC_BATCH {
            let r = self.flush_assocs();
            self.keep(r);
        }
    }

    fn chunks(&mut self, time: TimeBase, rows: ChunkRows) {
        if self.error.is_some() {
            return;
        }
        let c = shell(
            &self.file,
            time.first_ns,
            Vec::new(),
            Vec::new(),
            Some(rows),
        );
        let r = super::chunks(&c).and_then(|df| self.add("chunks", df));
        self.keep(r);
    }

    fn progress(&mut self, p: PassProgress) {
        if let Some(f) = &mut self.progress {
            f(p);
        }
    }
}

/// Whether two Parquet files hold the same rows, in any order: `Ok(rows)` when they do, else
/// `Err` with what differs (columns, types, row count, or the first column whose sorted values
/// differ). Compares the streamed tables with `capture_tables`' (tests, `bench/dashboard.sh`).
pub fn same_rows(a: &Path, b: &Path) -> PolarsResult<Result<usize, String>> {
    let (a, b) = (super::read_parquet(a)?, super::read_parquet(b)?);
    if a.schema() != b.schema() {
        return Ok(Err(format!(
            "schemas differ: {:?} vs {:?}",
            a.schema(),
            b.schema()
        )));
    }
    if a.height() != b.height() {
        return Ok(Err(format!("{} rows vs {}", a.height(), b.height())));
    }
    let by: Vec<PlSmallStr> = a.get_column_names_owned();
    let opts = SortMultipleOptions::default().with_nulls_last(true);
    let a = a.sort(by.clone(), opts.clone())?;
    let b = b.sort(by, opts)?;
    for (x, y) in a.columns().iter().zip(b.columns()) {
        if !x
            .as_materialized_series()
            .equals_missing(y.as_materialized_series())
        {
            let i = (0..x.len())
                .find(|&i| x.get(i).ok() != y.get(i).ok())
                .unwrap_or(0);
            return Ok(Err(format!(
                "column {}: row {i} of the sorted rows: {:?} vs {:?}",
                x.name(),
                x.get(i).ok(),
                y.get(i).ok()
            )));
        }
    }
    Ok(Ok(a.height()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze_file, analyze_reader_rows, Options};

    /// A fresh directory under the system temp dir.
    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("table-stream-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("cli")).unwrap();
        std::fs::create_dir_all(d.join("streamed")).unwrap();
        d
    }

    /// The streamed tables of `path` against `capture_tables` (the CLI's `--format parquet`):
    /// the same files, each with the same rows. Returns the tables compared.
    fn check(path: &Path, tag: &str) -> usize {
        let opts = Options {
            keep_rows: true,
            keep_chunks: true,
            ..Options::default()
        };
        let d = scratch(tag);
        let (cli, streamed) = (d.join("cli"), d.join("streamed"));
        let whole = analyze_file(path, &opts, &mut |_| {}).unwrap();
        for mut t in super::super::capture_tables(&whole).unwrap() {
            let p = cli.join(format!("{}.parquet", t.name));
            super::super::write_table(&mut t.df, &p, super::super::TableFormat::Parquet).unwrap();
        }
        let reader = crate::capture::CaptureReader::open(path).unwrap();
        let mut sink = TableStream::new(&streamed, &whole.file);
        let rest = analyze_reader_rows(&whole.file, reader, &opts, &mut sink);
        sink.finish(&rest).unwrap();
        let mut n = 0;
        for e in std::fs::read_dir(&cli).unwrap() {
            let p = e.unwrap().path();
            let other = streamed.join(p.file_name().unwrap());
            assert!(other.is_file(), "{tag}: {} not streamed", other.display());
            let same = same_rows(&p, &other).unwrap();
            assert!(same.is_ok(), "{tag}: {}: {same:?}", p.display());
            n += 1;
        }
        assert_eq!(n, std::fs::read_dir(&streamed).unwrap().count(), "{tag}");
        let _ = std::fs::remove_dir_all(&d);
        n
    }

    /// Lab traces of every kind (SCTP failover, abort, TCP and SCTP mixed, pcapng).
    #[test]
    fn streamed_tables_have_the_cli_rows() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces");
        for name in [
            "cut_p20_sack40_sender.pcap",
            "abort_p20_receiver.pcap",
            "fmt_pcapng_sender.pcapng",
            "mixed_p20_cut5_rec8_sender.pcap",
        ] {
            assert!(check(&root.join(name), name) >= 20);
        }
    }

    /// Hundreds of associations ending during the pass and several chunk batches: rows
    /// stacked from many batches, ended associations before the open ones.
    #[test]
    fn streamed_tables_of_many_associations() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sample-traces");
        let src = crate::synth::Source::open(&root.join("cut_p20_sack40_sender.pcap")).unwrap();
        let d = scratch("many-src");
        let cap = d.join("many.pcap");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&cap).unwrap());
        let (_, frames, copies) = src.write(&mut out, 12 << 20).unwrap();
        drop(out);
        assert!(
            copies > 50 && frames > crate::analyze::CHUNK_BATCH as u64,
            "{frames} frames"
        );
        assert!(check(&cap, "many") >= 20);
        let _ = std::fs::remove_dir_all(&d);
    }
}
