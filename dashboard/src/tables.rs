//! The only dashboard module that uses polars (`analyzer::polars`, the analyzer's build): reads the
//! stored Parquet tables into the row structs the charts use, and converts tables to CSV.

use std::fs;
use std::path::Path;

use analyzer::frames::{self, TableFormat};
use analyzer::polars::prelude::*;
use tempfile::NamedTempFile;

use crate::charts::{AssocData, DataRow, DelayRow, HbRow, MsgRow, RttRow, RtxRow, SackRow};

type R<T> = Result<T, String>;

/// A table read back from Parquet.
struct Frame(DataFrame);

fn read(path: &Path) -> R<Frame> {
    frames::read_parquet(path)
        .map(Frame)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The columns `cols` of `dir/<name>.parquet` (those it has), only the rows of association
/// `assoc` when given (filtered while the row groups are read: one association's chart never
/// holds a large capture's whole table); a missing table is empty (e.g. no `chunks`).
fn read_assoc(dir: &Path, name: &str, assoc: Option<u32>, cols: &[&str]) -> R<Option<Frame>> {
    let p = dir.join(format!("{name}.parquet"));
    if !p.is_file() {
        return Ok(None);
    }
    frames::read_parquet_where(&p, "assoc", assoc.map(u64::from), Some(cols))
        .map(|df| Some(Frame(df)))
        .map_err(|e| format!("{}: {e}", p.display()))
}

impl Frame {
    fn height(&self) -> usize {
        self.0.height()
    }

    fn has(&self, name: &str) -> bool {
        self.0.column(name).is_ok()
    }

    fn cast(&self, name: &str, dt: DataType) -> Option<Series> {
        let c = self.0.column(name).ok()?;
        c.as_materialized_series().cast(&dt).ok()
    }

    fn f64s(&self, name: &str) -> Vec<Option<f64>> {
        match self.cast(name, DataType::Float64) {
            Some(s) => s.f64().map(|c| c.iter().collect()).unwrap_or_default(),
            None => vec![None; self.height()],
        }
    }

    fn u64s(&self, name: &str) -> Vec<Option<u64>> {
        match self.cast(name, DataType::UInt64) {
            Some(s) => s.u64().map(|c| c.iter().collect()).unwrap_or_default(),
            None => vec![None; self.height()],
        }
    }

    fn bools(&self, name: &str) -> Vec<Option<bool>> {
        match self.cast(name, DataType::Boolean) {
            Some(s) => s.bool().map(|c| c.iter().collect()).unwrap_or_default(),
            None => vec![None; self.height()],
        }
    }

    /// Calls `f(row, value)` for every row of a string column.
    fn each_str(&self, name: &str, mut f: impl FnMut(usize, Option<&str>)) {
        match self.cast(name, DataType::String) {
            Some(s) => match s.str() {
                Ok(c) => c.iter().enumerate().for_each(|(i, v)| f(i, v)),
                Err(_) => (0..self.height()).for_each(|i| f(i, None)),
            },
            None => (0..self.height()).for_each(|i| f(i, None)),
        }
    }
}

fn sender(v: Option<u64>) -> u8 {
    v.unwrap_or(0).min(1) as u8
}

/// Loads the rows of association `assoc` (or of all associations, for the compare page, when
/// `None`) from the tables in `dir`.
pub fn load(dir: &Path, assoc: Option<u32>, duration_s: f64) -> R<AssocData> {
    let mut d = AssocData {
        duration_s,
        ..AssocData::default()
    };
    if let Some(f) = read_assoc(dir, "chunks", assoc, &CHUNK_COLS)? {
        load_chunks(&mut d, &f, assoc.is_none());
    }
    if assoc.is_none() {
        if let Some(f) = read_assoc(
            dir,
            "messages",
            None,
            &["assoc", "sender", "done_s", "frame"],
        )? {
            let (a, s, done, fr) = (
                f.u64s("assoc"),
                f.u64s("sender"),
                f.f64s("done_s"),
                f.u64s("frame"),
            );
            for i in 0..f.height() {
                if let Some(t) = done[i] {
                    d.messages.push(MsgRow {
                        assoc: a[i].unwrap_or(0) as u32,
                        sender: sender(s[i]),
                        done_s: t,
                        frame: fr[i],
                    });
                }
            }
        }
        load_tcp(&mut d, dir)?;
        return Ok(d);
    }
    if let Some(f) = read_assoc(
        dir,
        "rtt_samples",
        assoc,
        &[
            "time_s",
            "sender",
            "rtt_ms",
            "est_rto_ms",
            "frame_ack",
            "path",
            "kind",
        ],
    )? {
        let (t, s, rtt, rto, fr) = (
            f.f64s("time_s"),
            f.u64s("sender"),
            f.f64s("rtt_ms"),
            f.f64s("est_rto_ms"),
            f.u64s("frame_ack"),
        );
        let mut paths = vec![0u16; f.height()];
        f.each_str("path", |i, v| paths[i] = d.intern(v.unwrap_or("")));
        let mut hb = vec![false; f.height()];
        f.each_str("kind", |i, v| hb[i] = v == Some("heartbeat"));
        for i in 0..f.height() {
            if let (Some(t), Some(r)) = (t[i], rtt[i]) {
                d.rtt.push(RttRow {
                    t,
                    sender: sender(s[i]),
                    path: paths[i],
                    heartbeat: hb[i],
                    rtt_ms: r,
                    est_rto_ms: rto[i],
                    frame: fr[i],
                });
            }
        }
    }
    if let Some(f) = read_assoc(
        dir,
        "sack_delays",
        assoc,
        &["sender", "sack_delay_ms", "path"],
    )? {
        let (s, ms) = (f.u64s("sender"), f.f64s("sack_delay_ms"));
        let mut paths = vec![0u16; f.height()];
        f.each_str("path", |i, v| paths[i] = d.intern(v.unwrap_or("")));
        for i in 0..f.height() {
            if let Some(ms) = ms[i] {
                d.delays.push(DelayRow {
                    sender: sender(s[i]),
                    path: paths[i],
                    ms,
                });
            }
        }
    }
    if let Some(f) = read_assoc(
        dir,
        "retransmissions",
        assoc,
        &[
            "time_s", "sender", "tsn", "frame", "spurious", "path", "kind",
        ],
    )? {
        let (t, s, tsn, fr, sp) = (
            f.f64s("time_s"),
            f.u64s("sender"),
            f.u64s("tsn"),
            f.u64s("frame"),
            f.bools("spurious"),
        );
        let mut paths = vec![0u16; f.height()];
        f.each_str("path", |i, v| paths[i] = d.intern(v.unwrap_or("")));
        let mut kinds = vec![String::new(); f.height()];
        f.each_str("kind", |i, v| kinds[i] = v.unwrap_or("").to_string());
        for (i, kind) in kinds.into_iter().enumerate() {
            if let (Some(t), Some(tsn), Some(fr)) = (t[i], tsn[i], fr[i]) {
                d.rtx.push(RtxRow {
                    t,
                    frame: fr,
                    sender: sender(s[i]),
                    tsn: tsn as u32,
                    path: paths[i],
                    kind,
                    spurious: sp[i].unwrap_or(false),
                });
            }
        }
    }
    Ok(d)
}

/// The columns of the `chunks` table `load_chunks` reads.
const CHUNK_COLS: [&str; 11] = [
    "type",
    "dst",
    "time_s",
    "frame",
    "sender",
    "assoc",
    "tsn",
    "payload_len",
    "cum_tsn_ack",
    "gap_blocks",
    "dup_tsns",
];

/// DATA, SACK and HEARTBEAT rows of the `chunks` table.
fn load_chunks(d: &mut AssocData, f: &Frame, all: bool) {
    #[derive(Clone, Copy, PartialEq)]
    enum K {
        Data,
        Sack,
        Hb,
        Other,
    }
    let mut kind = vec![K::Other; f.height()];
    f.each_str("type", |i, v| {
        kind[i] = match v {
            Some("DATA" | "I-DATA") => K::Data,
            Some("SACK" | "NR-SACK") => K::Sack,
            Some("HEARTBEAT") => K::Hb,
            _ => K::Other,
        }
    });
    let mut dst = vec![0u16; f.height()];
    f.each_str("dst", |i, v| {
        if kind[i] == K::Data || kind[i] == K::Hb {
            dst[i] = d.intern(v.unwrap_or(""));
        }
    });
    let (t, fr, s, a) = (
        f.f64s("time_s"),
        f.u64s("frame"),
        f.u64s("sender"),
        f.u64s("assoc"),
    );
    let (tsn, plen, cum) = (f.u64s("tsn"), f.u64s("payload_len"), f.u64s("cum_tsn_ack"));
    let (gaps, dups) = (f.u64s("gap_blocks"), f.u64s("dup_tsns"));
    for i in 0..f.height() {
        let (Some(t), Some(frame)) = (t[i], fr[i]) else {
            continue;
        };
        let sender = sender(s[i]);
        match kind[i] {
            K::Data if all => d.all_data.push((
                a[i].unwrap_or(0) as u32,
                sender,
                t,
                plen[i].unwrap_or(0) as u32,
            )),
            K::Data => {
                if let Some(tsn) = tsn[i] {
                    d.data.push(DataRow {
                        t,
                        frame,
                        sender,
                        dst: dst[i],
                        tsn: tsn as u32,
                        bytes: plen[i].unwrap_or(0) as u32,
                    });
                }
            }
            K::Sack if !all => {
                if let Some(c) = cum[i] {
                    d.sacks.push(SackRow {
                        t,
                        frame,
                        sender,
                        cum: c as u32,
                        gaps: gaps[i].unwrap_or(0) as u32,
                        dups: dups[i].unwrap_or(0) as u32,
                    });
                }
            }
            K::Hb if !all => d.hbs.push(HbRow {
                t,
                frame,
                sender,
                dst: dst[i],
            }),
            _ => {}
        }
    }
}

const TCP_FLOW_COLS: [&str; 5] = ["flow", "flow_id", "tcp_flow", "conn", "connection"];
const TCP_TIME_COLS: [&str; 3] = ["time_s", "t_s", "ts_s"];
/// Time columns of tables already binned per second (`tcp_throughput`).
const TCP_SECOND_COLS: [&str; 1] = ["second_start_s"];
const TCP_BYTES_COLS: [&str; 5] = ["payload_len", "bytes", "len", "payload_bytes", "seg_len"];
const TCP_DELIVERY_COLS: [&str; 4] = ["done_s", "delivered_s", "arrival_s", "ack_s"];

/// TCP series for the compare page, from whatever `tcp_*` tables the analyzer wrote: a table
/// with a flow column, a per-second bin column and a byte count (`tcp_throughput`) gives
/// throughput as binned by the analyzer; one with a time column and a byte count per segment
/// gives throughput binned here; one with a delivery-time column gives delivery gaps. Series are
/// per flow and, when the table has a `sender` column, per direction.
fn load_tcp(d: &mut AssocData, dir: &Path) -> R<()> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Ok(());
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("tcp") && n.ends_with(".parquet"))
        .collect();
    names.sort();
    for n in names {
        let f = read(&dir.join(&n))?;
        let find = |cands: &[&str]| cands.iter().find(|c| f.has(c)).map(|c| c.to_string());
        let Some(flow) = find(&TCP_FLOW_COLS) else {
            continue;
        };
        let mut flows = vec![String::new(); f.height()];
        f.each_str(&flow, |i, v| {
            flows[i] = format!("TCP #{}", v.unwrap_or("?"))
        });
        if f.has("sender") {
            for (l, s) in flows.iter_mut().zip(f.u64s("sender")) {
                l.push_str(&format!(" sender {}", s.unwrap_or(0)));
            }
        }
        if let (Some(tc), Some(bc)) = (find(&TCP_SECOND_COLS), find(&TCP_BYTES_COLS)) {
            if d.tcp_rate.is_empty() {
                let (t, b) = (f.f64s(&tc), f.f64s(&bc));
                for i in 0..f.height() {
                    if let (Some(t), Some(b)) = (t[i], b[i]) {
                        d.tcp_rate.push((flows[i].clone(), t, b));
                    }
                }
            }
        } else if let (Some(tc), Some(bc)) = (find(&TCP_TIME_COLS), find(&TCP_BYTES_COLS)) {
            if d.tcp_bytes.is_empty() {
                let (t, b) = (f.f64s(&tc), f.f64s(&bc));
                for i in 0..f.height() {
                    if let (Some(t), Some(b)) = (t[i], b[i]) {
                        d.tcp_bytes.push((flows[i].clone(), t, b));
                    }
                }
            }
        }
        if let Some(dc) = find(&TCP_DELIVERY_COLS) {
            if d.tcp_deliveries.is_empty() {
                let t = f.f64s(&dc);
                for i in 0..f.height() {
                    if let Some(t) = t[i] {
                        d.tcp_deliveries.push((flows[i].clone(), t));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Writes the CSV form of a Parquet table to `csv` (atomically), for download.
pub fn parquet_to_csv(parquet: &Path, csv: &Path) -> R<()> {
    let mut f = read(parquet)?;
    let dir = csv.parent().unwrap_or(Path::new("."));
    let tmp = NamedTempFile::new_in(dir).map_err(|e| e.to_string())?;
    frames::write_table(&mut f.0, tmp.path(), TableFormat::Csv).map_err(|e| e.to_string())?;
    tmp.persist(csv).map_err(|e| e.error.to_string())?;
    Ok(())
}
