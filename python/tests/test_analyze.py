"""The Python package against the CLI: same report, same tables, for the same captures.

The CLI binary is ``$SCTP_ANALYZER_BIN``, else ``${CARGO_TARGET_DIR:-target}/debug/sctp-analyzer``
(``scripts/test-all.sh`` builds it before running these tests).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa  # type: ignore[import-untyped]
import pytest

import sctp_analyzer
from sctp_analyzer import CaptureError

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample-traces"
BROKEN = SAMPLES / "broken"

# SCTP failover, spurious failover, SCTP and TCP side by side, pcapng, SCTP over UDP, TCP alone.
CAPTURES = [
    "cut_p20_sack40_sender.pcap",
    "spur_pmr1_rtomin30_sender.pcap",
    "mixed_p20_cut5_rec8_sender.pcap",
    "fmt_pcapng_receiver.pcapng",
    "udp_cut_p20_sender.pcap",
    "tcp_loss2_p20_sender.pcap",
]


@pytest.fixture(scope="session")
def cli() -> Path:
    env = os.environ.get("SCTP_ANALYZER_BIN")
    if env:
        path = Path(env)
    else:
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        path = target / "debug" / "sctp-analyzer"
    if not path.exists():
        pytest.fail(f"the CLI is not built: {path} (cargo build --bin sctp-analyzer)")
    return path


def cli_json(cli: Path, *args: str | Path) -> dict[str, Any]:
    out = subprocess.run(
        [cli, "analyze", "--format", "json", "--no-progress", *args],
        check=False,
        capture_output=True,
    )
    doc: dict[str, Any] = json.loads(out.stdout)
    return doc


def cli_parquet(cli: Path, out: Path, *args: str | Path) -> dict[str, pl.DataFrame]:
    subprocess.run(
        [cli, "analyze", "--format", "parquet", "--no-progress", "--out", out, *args],
        check=True,
        capture_output=True,
    )
    return {p.stem: pl.read_parquet(p) for p in sorted(out.glob("*.parquet"))}


@pytest.mark.parametrize("name", CAPTURES)
def test_report_and_tables_equal_the_cli(cli: Path, tmp_path: Path, name: str) -> None:
    path = SAMPLES / name
    a = sctp_analyzer.analyze(path, chunks=True)
    doc = cli_json(cli, path)
    assert doc["version"] == sctp_analyzer.REPORT_VERSION
    assert a.report == doc["captures"][0]
    assert a.file == str(path) and a.error is None

    want = cli_parquet(cli, tmp_path, path)
    assert sorted(a.tables) == sorted(want)
    assert "chunks" in a.tables
    for table, df in a.tables.items():
        assert df.schema == want[table].schema, table
        assert df.equals(want[table]), table
    assert sum(len(df) for df in a.tables.values()) > 0


def test_options_equal_the_cli_flags(cli: Path, tmp_path: Path) -> None:
    path = SAMPLES / "mixed_p20_cut5_rec8_sender.pcap"
    a = sctp_analyzer.analyze(path, tcp=False, deadline_ms=50, sctp_udp_ports=[9900])
    flags = ["--no-tcp", "--deadline", "50", "--sctp-udp-port", "9900"]
    assert a.report == cli_json(cli, *flags, path)["captures"][0]
    assert a.report["tcp_flows"] == []
    want = cli_parquet(cli, tmp_path, "--no-chunks", *flags, path)
    assert sorted(a.tables) == sorted(want) and "chunks" not in a.tables
    for table, df in a.tables.items():
        assert df.equals(want[table]), table


def test_report_alone_is_the_cli_streamed_json(cli: Path) -> None:
    path = SAMPLES / "cut_p20_sack40_sender.pcap"
    a = sctp_analyzer.analyze(path, tables=False)
    assert a.tables == {} and a.arrow == {}
    assert a.report == cli_json(cli, path)["captures"][0]


def test_tables_are_arrow_for_pyarrow_too() -> None:
    a = sctp_analyzer.analyze(SAMPLES / "cut_p20_sack40_sender.pcap")
    t = a.arrow["paths"]
    assert t.name == "paths" and len(t) == len(a.tables["paths"])
    # Twice: each call exports a fresh stream of the same buffers.
    for _ in range(2):
        table = pa.table(t)
        assert pl.DataFrame(pl.from_arrow(table)).equals(a.tables["paths"])
    assert pa.schema(t).names == a.tables["paths"].columns


def write_pcap(path: Path, header: bytes, records: list[bytes]) -> Path:
    path.write_bytes(header + b"".join(records))
    return path


def pcap_records(path: Path) -> tuple[bytes, list[bytes]]:
    data = path.read_bytes()
    assert data[:4] == b"\xd4\xc3\xb2\xa1", "a classic little-endian pcap"
    records, at = [], 24
    while at + 16 <= len(data):
        (caplen,) = struct.unpack_from("<I", data, at + 8)
        records.append(data[at : at + 16 + caplen])
        at += 16 + caplen
    return data[:24], records


def without_file_names(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in ("file", "files", "format", "warnings")}


def test_a_capture_split_in_three_reads_back_as_the_unsplit_one(cli: Path, tmp_path: Path) -> None:
    src = SAMPLES / "cut_p20_sack40_sender.pcap"
    header, recs = pcap_records(src)
    n = len(recs)
    parts = [
        write_pcap(tmp_path / f"ring_{i + 1:05}.pcap", header, recs[r])
        for i, r in enumerate([slice(0, n // 3), slice(n // 3, 2 * n // 3), slice(2 * n // 3, n)])
    ]
    whole = sctp_analyzer.analyze(src, chunks=True)
    # Given in any order: read in the order of their first packets.
    merged = sctp_analyzer.analyze(list(reversed(parts)), chunks=True)
    assert without_file_names(merged.report) == without_file_names(whole.report)
    assert [f["path"] for f in merged.report["files"]] == [str(p) for p in parts]
    assert [f["first_frame"] for f in merged.report["files"]] == [1, n // 3 + 1, 2 * n // 3 + 1]
    assert sorted(merged.tables) == sorted(whole.tables)
    for table, df in merged.tables.items():
        # Every row names its capture: the rotation is named after its file read first.
        assert df["capture"].eq(str(parts[0])).all(), table
        assert df.drop("capture").equals(whole.tables[table].drop("capture")), table
    # The folder, as `--merge DIR` reads it; and the CLI's own merged report.
    assert sctp_analyzer.analyze(tmp_path).report == merged.report
    assert merged.report == cli_json(cli, "--merge", *parts)["captures"][0]


def test_analyze_many_equals_the_cli_batch(cli: Path) -> None:
    paths = [SAMPLES / n for n in CAPTURES[:3]]
    many = sctp_analyzer.analyze_many(paths, jobs=2, tables=False)
    doc = cli_json(cli, "--jobs", "2", *paths)
    assert [a.report for a in many] == doc["captures"]
    with_tables = sctp_analyzer.analyze_many(paths, jobs=2)
    for a, b in zip(with_tables, many):
        assert a.report == b.report and "failovers" in a.tables


@pytest.mark.parametrize(
    ("name", "offset", "says"),
    [
        ("bad_magic.pcap", 0, "bad magic"),
        ("empty.pcap", 0, "empty file"),
        ("truncated_global_header.pcap", 0, "truncated pcap file header"),
        ("corrupt_gzip.pcap.gz", 0, "gzip"),
    ],
)
def test_a_broken_file_raises_naming_file_and_offset(name: str, offset: int, says: str) -> None:
    path = BROKEN / name
    with pytest.raises(CaptureError) as e:
        sctp_analyzer.analyze(path)
    assert e.value.file == str(path) and e.value.filename == str(path)
    assert e.value.offset == offset
    assert str(e.value).startswith(f"{path}: ") and says in str(e.value)
    assert f"offset {offset}" in str(e.value)
    assert isinstance(e.value, OSError) and isinstance(e.value, ValueError)


def test_a_missing_file_raises() -> None:
    with pytest.raises(CaptureError, match="no-such.pcap"):
        sctp_analyzer.analyze(SAMPLES / "no-such.pcap")
    with pytest.raises(ValueError, match="no capture file"):
        sctp_analyzer.analyze([])
    with pytest.raises(TypeError):
        sctp_analyzer.analyze(SAMPLES / "cut_p20_sack40_sender.pcap", chunks="yes")  # type: ignore[arg-type]


def test_a_broken_record_is_a_warning_not_an_error(cli: Path) -> None:
    path = BROKEN / "truncated_record_body.pcap"
    a = sctp_analyzer.analyze(path)
    assert a.report["warnings"] and a.report == cli_json(cli, path)["captures"][0]


def test_analyze_many_reports_a_failed_capture_as_the_cli(cli: Path) -> None:
    paths = [BROKEN / "bad_magic.pcap", SAMPLES / "cut_p20_sack40_sender.pcap"]
    with pytest.raises(CaptureError, match="bad magic"):
        sctp_analyzer.analyze_many(paths)
    got = sctp_analyzer.analyze_many(paths, errors="report")
    assert got[0].error is not None and "bad magic" in got[0].error and got[0].tables == {}
    assert got[1].error is None
    assert [a.report for a in got] == cli_json(cli, *paths)["captures"]
