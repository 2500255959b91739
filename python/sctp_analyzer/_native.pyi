"""Type stubs of the Rust extension module (``python/src/lib.rs``); use the package's API."""

import os
from collections.abc import Sequence
from pathlib import Path

_Path = str | os.PathLike[str]

REPORT_VERSION: int
"""The ``version`` of the CLI's JSON report document this package's reports belong to."""
UDP_PORT: int
"""RFC 6951's UDP port for SCTP, always decoded."""

class ArrowTable:
    """One table as Arrow record batches (Arrow PyCapsule interface, no copy)."""

    @property
    def name(self) -> str: ...
    def __len__(self) -> int: ...
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...
    def __arrow_c_schema__(self) -> object: ...

def analyze(
    files: Sequence[_Path],
    *,
    tcp: bool,
    chunks: bool,
    sctp_udp_ports: Sequence[int],
    deadline_ms: float | None,
    tables: bool,
) -> tuple[str, list[ArrowTable]]: ...
def analyze_many(
    captures: Sequence[Sequence[_Path]],
    *,
    tcp: bool,
    chunks: bool,
    sctp_udp_ports: Sequence[int],
    deadline_ms: float | None,
    tables: bool,
    jobs: int | None,
) -> list[tuple[str, list[ArrowTable]] | BaseException]: ...
def captures(inputs: Sequence[_Path], grouping: str) -> list[list[Path]]: ...
def failed_report(file: str, error: str) -> str: ...
def partition_value(name: str) -> str: ...
def is_capture_name(name: str) -> bool: ...
