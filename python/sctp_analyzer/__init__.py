"""SCTP (and TCP) trace analysis from Python: the analyzer of ``sctp-analyzer``, in-process.

``analyze(path_or_paths)`` reads one capture (pcap / pcapng, optionally compressed with gzip,
zstd or LZ4; several files are one rotated capture) and returns an :class:`Analysis`: ``report``, the capture's
object of ``sctp-analyzer analyze --format json`` as a dict, and ``tables``, every table of
``--format parquet`` as a polars DataFrame. Both come from the Rust library's one analysis
pass; the tables cross into Python as Arrow (the Arrow PyCapsule interface), without a copy.

>>> import sctp_analyzer
>>> a = sctp_analyzer.analyze("sample-traces/cut_p20_sack40_sender.pcap")
>>> a.report["associations"][0]["paths"][0]["rtt_ms"]["median"]  # doctest: +SKIP
>>> a.tables["failovers"]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Union

import polars as pl

from . import _native
from ._native import REPORT_VERSION, UDP_PORT, ArrowTable

__all__ = [
    "Analysis",
    "ArrowTable",
    "CaptureError",
    "REPORT_VERSION",
    "UDP_PORT",
    "analyze",
    "analyze_many",
]

PathLike = Union[str, "os.PathLike[str]"]


class CaptureError(OSError, ValueError):
    """A capture that cannot be read at all (missing file, not a pcap / pcapng, broken header).

    ``file`` names the file, ``offset`` the byte offset of the problem (``None`` when it has
    none). Problems after the file header are not errors: they end the reading with a warning
    in ``report["warnings"]`` and keep everything read before, as the CLI does.
    """

    def __init__(
        self, message: str, file: str, offset: int | None = None, reason: str | None = None
    ) -> None:
        super().__init__(message)
        self.file = file
        self.filename = file
        self.offset = offset
        self.reason = message if reason is None else reason

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Analysis:
    """What one capture gave.

    ``report``: the capture's object of the CLI's ``--format json`` report (associations,
    comparison, TCP flows, counters, warnings; figures defined in METRICS.md).
    ``tables``: name -> polars DataFrame, the tables of the CLI's ``--format parquet``
    (``associations``, ``paths``, ``rtt_samples``, ``failovers``, ``tcp_flows``, ...; ``chunks``
    only with ``chunks=True``); empty with ``tables=False``.
    ``arrow``: the same tables as Arrow objects (``pyarrow.table(a.arrow["paths"])``, DuckDB).
    """

    report: dict[str, Any]
    tables: dict[str, pl.DataFrame] = field(repr=False)
    arrow: dict[str, ArrowTable] = field(repr=False)

    @property
    def file(self) -> str:
        """The capture's name (its first file by first packet)."""
        return str(self.report["file"])

    @property
    def error(self) -> str | None:
        """Why the capture could not be read (only in ``analyze_many``'s results), else None."""
        err = self.report.get("error")
        return None if err is None else str(err)

    def __repr__(self) -> str:
        r = self.report
        return (
            f"Analysis(file={r.get('file')!r}, packets={r.get('packets')}, "
            f"associations={len(r.get('associations', []))}, "
            f"tcp_flows={len(r.get('tcp_flows', []))}, tables={sorted(self.tables)})"
        )


def _paths(path_or_paths: PathLike | Iterable[PathLike]) -> list[str]:
    if isinstance(path_or_paths, (str, os.PathLike)):
        return [os.fspath(path_or_paths)]
    paths = [os.fspath(p) for p in path_or_paths]
    if not paths:
        raise ValueError("no capture file given")
    return paths


def _analysis(report_json: str, arrow: list[ArrowTable]) -> Analysis:
    tables = {t.name: pl.DataFrame(t) for t in arrow}
    return Analysis(json.loads(report_json), tables, {t.name: t for t in arrow})


def analyze(
    path_or_paths: PathLike | Iterable[PathLike],
    *,
    tcp: bool = True,
    chunks: bool = False,
    sctp_udp_ports: Iterable[int] = (),
    deadline_ms: float | None = None,
    tables: bool = True,
) -> Analysis:
    """Analyses one capture: ``sctp-analyzer analyze --merge PATHS`` in-process.

    ``path_or_paths``: a capture file (pcap, pcapng, ``.gz``), or several files (and folders of
    capture files) read as one rotated capture, in the order of their first packets.
    ``tcp``: track TCP connections (``--no-tcp`` when False). ``chunks``: keep one row per chunk
    (the ``chunks`` table; ``--chunks``). ``sctp_udp_ports``: UDP ports carrying SCTP besides
    9899 (``--sctp-udp-port``). ``deadline_ms``: inter-arrival deadline (``--deadline``).
    ``tables``: build the DataFrames (False: the report alone, from the CLI's streamed JSON
    pass, in flat memory).

    The GIL is released during the analysis. Raises :class:`CaptureError` when the capture
    cannot be read.

    The report equals the CLI's JSON object for the capture, except that where the CLI's
    streamed pass retired TCP connections (silent for 240 s) it lists those first in
    ``tcp_flows`` and ``comparison``; here they come by id (``tables=False``: as the CLI).
    """
    files = _native.captures(_paths(path_or_paths), "merge")[0]
    if not files:
        raise CaptureError("no capture file under the given folders", str(path_or_paths))
    report_json, arrow = _native.analyze(
        files,
        tcp=tcp,
        chunks=chunks,
        sctp_udp_ports=list(sctp_udp_ports),
        deadline_ms=deadline_ms,
        tables=tables,
    )
    return _analysis(report_json, arrow)


def analyze_many(
    paths: PathLike | Iterable[PathLike],
    *,
    rotated: bool = False,
    jobs: int | None = None,
    tcp: bool = True,
    chunks: bool = False,
    sctp_udp_ports: Iterable[int] = (),
    deadline_ms: float | None = None,
    tables: bool = True,
    errors: Literal["raise", "report"] = "raise",
) -> list[Analysis]:
    """Analyses each capture of ``paths`` (files and folders) in parallel: ``sctp-analyzer
    analyze PATHS`` (``--rotated`` with ``rotated=True``: each rotation one capture).

    ``jobs``: worker threads, one capture each (default: one per core). Results in input order.
    A capture that cannot be read raises :class:`CaptureError` (``errors="raise"``), or, with
    ``errors="report"``, gives an :class:`Analysis` whose ``report`` names it with its
    ``error`` and has no tables, as the CLI's JSON does. Other options as in :func:`analyze`.
    """
    if errors not in ("raise", "report"):
        raise ValueError(f"errors must be 'raise' or 'report', not {errors!r}")
    captures = _native.captures(_paths(paths), "rotated" if rotated else "each")
    results = _native.analyze_many(
        captures,
        tcp=tcp,
        chunks=chunks,
        sctp_udp_ports=list(sctp_udp_ports),
        deadline_ms=deadline_ms,
        tables=tables,
        jobs=jobs,
    )
    out: list[Analysis] = []
    for files, r in zip(captures, results):
        if isinstance(r, BaseException):
            if errors == "raise" or not isinstance(r, CaptureError):
                raise r
            out.append(Analysis(_failed_report(r), {}, {}))
        else:
            out.append(_analysis(*r))
    return out


def _failed_report(e: CaptureError) -> dict[str, Any]:
    """The JSON object the CLI writes for a capture it could not read."""
    report: dict[str, Any] = json.loads(_native.failed_report(e.file, e.reason))
    return report
