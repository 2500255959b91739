//! Every polars DataFrame the analyzer produces, built once from column vectors, and their export
//! to CSV / Parquet / JSON. The only module that imports polars (`infer` holds the inference tables).

use std::fs::File;
use std::path::Path;

use polars::prelude::*;

use crate::analyze::CaptureAnalysis;
use crate::sctp::chunk_type_name;

mod infer;
mod lifecycle;
mod stream;
pub use stream::{same_rows, TableStream};
mod streams;
mod study;
pub use study::study;
mod tcp;

/// A named table of one capture.
pub struct Table {
    pub name: &'static str,
    pub df: DataFrame,
}

/// File formats the tables can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Csv,
    Parquet,
    Json,
}

impl TableFormat {
    pub fn extension(self) -> &'static str {
        match self {
            TableFormat::Csv => "csv",
            TableFormat::Parquet => "parquet",
            TableFormat::Json => "json",
        }
    }
}

pub(crate) fn col<T, S>(name: &str, v: S) -> Column
where
    Series: NamedFrom<S, T>,
    T: ?Sized,
{
    Column::new(name.into(), v)
}

/// All tables of one capture: `associations`, `paths`, and `chunks` when rows were kept.
pub fn capture_tables(c: &CaptureAnalysis) -> PolarsResult<Vec<Table>> {
    let life = lifecycle::reports(c);
    let mut out = vec![
        Table {
            name: "associations",
            df: associations(c, &life)?,
        },
        Table {
            name: "events",
            df: lifecycle::events(c, &life)?,
        },
        Table {
            name: "stalls",
            df: stalls(c)?,
        },
        Table {
            name: "paths",
            df: paths(c)?,
        },
        Table {
            name: "path_metrics",
            df: infer::path_metrics(c)?,
        },
        Table {
            name: "rtt_samples",
            df: infer::rtt_samples(c)?,
        },
        Table {
            name: "sack_delays",
            df: infer::sack_delays(c)?,
        },
        Table {
            name: "timeouts",
            df: infer::timeouts(c)?,
        },
        Table {
            name: "retransmissions",
            df: infer::retransmissions(c)?,
        },
        Table {
            name: "failovers",
            df: infer::failovers(c)?,
        },
        Table {
            name: "messages",
            df: infer::messages(c)?,
        },
        Table {
            name: "throughput",
            df: infer::throughput(c)?,
        },
        Table {
            name: "streams",
            df: streams::streams(c)?,
        },
        Table {
            name: "hol",
            df: streams::hol(c)?,
        },
    ];
    out.extend([
        Table {
            name: "tcp_flows",
            df: tcp::tcp_flows(c)?,
        },
        Table {
            name: "tcp_rtt_samples",
            df: tcp::tcp_rtt_samples(c)?,
        },
        Table {
            name: "tcp_retransmissions",
            df: tcp::tcp_retransmissions(c)?,
        },
        Table {
            name: "tcp_timeouts",
            df: tcp::tcp_timeouts(c)?,
        },
        Table {
            name: "tcp_delayed_acks",
            df: tcp::tcp_delayed_acks(c)?,
        },
        Table {
            name: "tcp_throughput",
            df: tcp::tcp_throughput(c)?,
        },
        Table {
            name: "comparison",
            df: tcp::comparison(c)?,
        },
    ]);
    if c.chunks.is_some() {
        out.push(Table {
            name: "chunks",
            df: chunks(c)?,
        });
    }
    Ok(out)
}

fn associations(
    c: &CaptureAnalysis,
    life: &[crate::lifecycle::LifecycleReport],
) -> PolarsResult<DataFrame> {
    let a = &c.associations;
    let addrs = |ep: usize| -> Vec<String> {
        a.iter()
            .map(|x| {
                x.endpoints[ep]
                    .addresses
                    .iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    let chunk_summary: Vec<String> = a
        .iter()
        .map(|x| {
            x.chunk_counts
                .iter()
                .map(|(t, n)| format!("{}:{n}", chunk_type_name(*t)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let mut cols = vec![
        col("capture", vec![c.file.as_str(); a.len()]),
        col("assoc", a.iter().map(|x| x.id as u32).collect::<Vec<_>>()),
        col(
            "port_0",
            a.iter()
                .map(|x| x.endpoints[0].port as u32)
                .collect::<Vec<_>>(),
        ),
        col(
            "vtag_0",
            a.iter().map(|x| x.endpoints[0].vtag).collect::<Vec<_>>(),
        ),
        col("addresses_0", addrs(0)),
        col(
            "port_1",
            a.iter()
                .map(|x| x.endpoints[1].port as u32)
                .collect::<Vec<_>>(),
        ),
        col(
            "vtag_1",
            a.iter().map(|x| x.endpoints[1].vtag).collect::<Vec<_>>(),
        ),
        col("addresses_1", addrs(1)),
        col(
            "handshake_seen",
            a.iter()
                .map(|x| x.lifecycle.handshake_completed())
                .collect::<Vec<_>>(),
        ),
        col(
            "first_s",
            a.iter().map(|x| c.rel_s(x.first_ns)).collect::<Vec<_>>(),
        ),
        col(
            "last_s",
            a.iter().map(|x| c.rel_s(x.last_ns)).collect::<Vec<_>>(),
        ),
        col("packets", a.iter().map(|x| x.packets).collect::<Vec<_>>()),
        col(
            "data_bytes",
            a.iter().map(|x| x.data_bytes).collect::<Vec<_>>(),
        ),
        col(
            "bad_checksums",
            a.iter().map(|x| x.bad_checksums).collect::<Vec<_>>(),
        ),
        col(
            "handshake_ms",
            a.iter()
                .map(|x| x.handshake_ns().map(|n| n as f64 / 1e6))
                .collect::<Vec<_>>(),
        ),
        col("aborted", a.iter().map(|x| x.aborted).collect::<Vec<_>>()),
        col("chunks", chunk_summary),
    ];
    cols.extend(lifecycle::assoc_columns(c, life));
    cols.extend(streams::assoc_columns(c));
    // Each endpoint's stack name (`crate::stack`; confidence and evidence are in the JSON).
    for ep in 0..2 {
        let names: Vec<Option<String>> =
            a.iter().map(|x| x.stack.report(ep).name.clone()).collect();
        cols.push(col(&format!("stack_{ep}"), names));
    }
    DataFrame::new_infer_height(cols)
}

fn paths(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let rows: Vec<_> = c
        .associations
        .iter()
        .flat_map(|a| a.paths.iter().map(move |p| (a.id as u32, p)))
        .collect();
    DataFrame::new_infer_height(vec![
        col("capture", vec![c.file.as_str(); rows.len()]),
        col("assoc", rows.iter().map(|r| r.0).collect::<Vec<_>>()),
        col(
            "sender",
            rows.iter().map(|r| r.1.sender as u32).collect::<Vec<_>>(),
        ),
        col(
            "src",
            rows.iter()
                .map(|r| crate::net::ip_text(&r.1.src))
                .collect::<Vec<_>>(),
        ),
        col(
            "dst",
            rows.iter()
                .map(|r| crate::net::ip_text(&r.1.dst))
                .collect::<Vec<_>>(),
        ),
        col(
            "packets",
            rows.iter().map(|r| r.1.packets).collect::<Vec<_>>(),
        ),
        col(
            "data_chunks",
            rows.iter().map(|r| r.1.data_chunks).collect::<Vec<_>>(),
        ),
        col(
            "data_bytes",
            rows.iter().map(|r| r.1.data_bytes).collect::<Vec<_>>(),
        ),
        col(
            "first_s",
            rows.iter()
                .map(|r| c.rel_s(r.1.first_ns))
                .collect::<Vec<_>>(),
        ),
        col(
            "last_s",
            rows.iter()
                .map(|r| c.rel_s(r.1.last_ns))
                .collect::<Vec<_>>(),
        ),
    ])
}

fn chunks(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let Some(r) = &c.chunks else {
        return Ok(DataFrame::empty());
    };
    let first = c.first_ns.unwrap_or(0);
    let u32s = |v: &[Option<u16>]| v.iter().map(|x| x.map(u32::from)).collect::<Vec<_>>();
    DataFrame::new_infer_height(vec![
        col("capture", vec![c.file.as_str(); r.len()]),
        col("frame", r.frame.clone()),
        col(
            "time_s",
            r.ts_ns
                .iter()
                .map(|t| (t - first) as f64 / 1e9)
                .collect::<Vec<_>>(),
        ),
        col("assoc", r.assoc.clone()),
        col(
            "sender",
            r.sender.iter().map(|&s| s as u32).collect::<Vec<_>>(),
        ),
        col(
            "src",
            r.src.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        ),
        col(
            "dst",
            r.dst.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        ),
        col(
            "type",
            r.ctype
                .iter()
                .map(|&t| chunk_type_name(t).into_owned())
                .collect::<Vec<_>>(),
        ),
        col(
            "flags",
            r.flags.iter().map(|&f| f as u32).collect::<Vec<_>>(),
        ),
        col(
            "length",
            r.length.iter().map(|&l| l as u32).collect::<Vec<_>>(),
        ),
        col("truncated", r.truncated.clone()),
        col("checksum_ok", r.checksum_ok.clone()),
        col("tsn", r.tsn.clone()),
        col("stream", u32s(&r.stream)),
        col("ssn_mid", r.ssn_mid.clone()),
        col("ppid", r.ppid.clone()),
        col("payload_len", r.payload_len.clone()),
        col("cum_tsn_ack", r.cum_tsn_ack.clone()),
        col("a_rwnd", r.a_rwnd.clone()),
        col("gap_blocks", u32s(&r.gap_blocks)),
        col("dup_tsns", u32s(&r.dup_tsns)),
    ])
}

/// Writes one table to `path` in `fmt`.
pub fn write_table(df: &mut DataFrame, path: &Path, fmt: TableFormat) -> PolarsResult<()> {
    let file = File::create(path)?;
    match fmt {
        TableFormat::Csv => CsvWriter::new(file).finish(df),
        TableFormat::Parquet => ParquetWriter::new(file).finish(df).map(|_| ()),
        TableFormat::Json => JsonWriter::new(file)
            .with_json_format(JsonFormat::Json)
            .finish(df),
    }
}

/// Reads a Parquet file back (tests, dashboard).
pub fn read_parquet(path: &Path) -> PolarsResult<DataFrame> {
    ParquetReader::new(File::open(path)?).finish()
}

/// Reads the rows of a Parquet table whose `column` equals `value` (all rows when `value` is
/// `None`), filtered as the row groups are read (a chart of one association out of a 1 GB
/// capture's `chunks` table must not hold the whole table), and of its columns only those of
/// `columns` it has (all when `None`): a 1 M-packet association's chart reads 10 of the chunk
/// table's columns, not all of them. A table without `column` is read unfiltered.
pub fn read_parquet_where(
    path: &Path,
    column: &str,
    value: Option<u64>,
    columns: Option<&[&str]>,
) -> PolarsResult<DataFrame> {
    let path = PlRefPath::try_from_path(path)?;
    let mut lf = LazyFrame::scan_parquet(path, ScanArgsParquet::default())?;
    let schema = lf.collect_schema()?;
    if let (Some(v), Some(dtype)) = (value, schema.get(column)) {
        // The literal in the column's own type, so that row-group statistics can skip groups.
        lf = lf.filter(polars::prelude::col(column).eq(lit(v).cast(dtype.clone())));
    }
    if let Some(cols) = columns {
        let keep: Vec<Expr> = cols
            .iter()
            .filter(|c| schema.get(c).is_some())
            .map(|c| polars::prelude::col(*c))
            .collect();
        lf = lf.select(keep);
    }
    lf.collect()
}

/// Renders a table as text (for the terminal).
pub fn to_text(df: &DataFrame) -> String {
    format!("{df}")
}

/// Stacks the tables of several captures by name (all have a `capture` column or frame ids).
pub fn stack(per_capture: Vec<Vec<Table>>) -> PolarsResult<Vec<Table>> {
    let mut out: Vec<Table> = Vec::new();
    for tables in per_capture {
        for t in tables {
            match out.iter_mut().find(|o| o.name == t.name) {
                Some(o) => {
                    o.df.vstack_mut(&t.df)?;
                }
                None => out.push(t),
            }
        }
    }
    Ok(out)
}

/// Writes CSV to any writer (stdout).
pub fn write_csv_to(df: &mut DataFrame, w: &mut dyn std::io::Write) -> PolarsResult<()> {
    CsvWriter::new(w).finish(df)
}

/// A partition value safe as a directory name (`capture=<value>`).
pub fn partition_value(name: &str) -> String {
    let base = std::path::Path::new(name)
        .file_name()
        .map_or_else(|| name.to_string(), |f| f.to_string_lossy().into_owned());
    base.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes one capture's tables hive-partitioned: `DIR/<table>/capture=<name>/part.parquet`
/// (the `capture` column becomes the partition key), so that polars, DuckDB, DataFusion or Spark
/// read a whole fleet's results as one table.
pub fn write_partitioned(
    tables: Vec<Table>,
    capture: &str,
    dir: &Path,
) -> PolarsResult<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    for mut t in tables {
        let part = dir
            .join(t.name)
            .join(format!("capture={}", partition_value(capture)));
        std::fs::create_dir_all(&part)?;
        if t.df.get_column_index("capture").is_some() {
            t.df = t.df.drop("capture")?;
        }
        let path = part.join("part.parquet");
        write_table(&mut t.df, &path, TableFormat::Parquet)?;
        written.push(path);
    }
    Ok(written)
}

/// Reads a hive-partitioned table back lazily (all captures as one frame, `capture` column
/// restored from the directory names).
pub fn scan_partitioned(dir: &Path, table: &str) -> PolarsResult<DataFrame> {
    let path = dir.join(table);
    // Without polars' date features, hive date inference panics (polars-io 0.55
    // schema_inference.rs): the partition values are file names, never dates.
    let args = ScanArgsParquet {
        hive_options: polars::io::HiveOptions {
            try_parse_dates: false,
            ..polars::io::HiveOptions::new_enabled()
        },
        ..Default::default()
    };
    LazyFrame::scan_parquet(PlRefPath::new(path.to_string_lossy().as_ref()), args)?.collect()
}

/// One row per stall (issue 15) of every direction: cause, start / end (null: to the end),
/// frames, evidence and display filter.
fn stalls(c: &CaptureAnalysis) -> PolarsResult<DataFrame> {
    let tb = crate::packet::TimeBase {
        first_ns: c.first_ns,
    };
    let rows: Vec<(u32, u32, crate::stalls::StallReport)> = c
        .associations
        .iter()
        .flat_map(|a| {
            (0..2u8).flat_map(move |s| {
                crate::report_infer::stall_reports(tb, a, s)
                    .into_iter()
                    .map(move |r| (a.id as u32, u32::from(s), r))
            })
        })
        .collect();
    DataFrame::new_infer_height(vec![
        col("capture", vec![c.file.as_str(); rows.len()]),
        col("assoc", rows.iter().map(|r| r.0).collect::<Vec<_>>()),
        col("sender", rows.iter().map(|r| r.1).collect::<Vec<_>>()),
        col(
            "cause",
            rows.iter().map(|r| r.2.cause.clone()).collect::<Vec<_>>(),
        ),
        col("t_s", rows.iter().map(|r| r.2.t_s).collect::<Vec<_>>()),
        col("end_s", rows.iter().map(|r| r.2.end_s).collect::<Vec<_>>()),
        col("frame", rows.iter().map(|r| r.2.frame).collect::<Vec<_>>()),
        col(
            "end_frame",
            rows.iter().map(|r| r.2.end_frame).collect::<Vec<_>>(),
        ),
        col(
            "evidence",
            rows.iter()
                .map(|r| r.2.evidence.clone())
                .collect::<Vec<_>>(),
        ),
        col(
            "filter",
            rows.iter().map(|r| r.2.filter.clone()).collect::<Vec<_>>(),
        ),
    ])
}
