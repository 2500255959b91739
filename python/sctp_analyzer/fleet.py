"""Fleet analysis on Ray: the captures of a folder or object-store prefix fanned out to a Ray
cluster's workers, one capture (or one rotated group) per task, each written in the CLI's
hive-partitioned Parquet layout, plus the CLI's merged summary.

Ray does the scheduling, retries and worker management (a task whose worker or node dies is run
again elsewhere); this module only plans the work and keeps it idempotent:

* every capture is keyed by the SHA-256 of its bytes (all files of a rotated group, in order),
  its name and paths, and the analysis options; a capture whose key is already recorded as done is not analysed
  again, so a second run over the same folder does no work and a changed file is redone;
* a task writes its tables under ``OUT/_fleet/tmp/`` and moves them into
  ``OUT/<table>/capture=<name>/part.parquet`` (the CLI's ``--format parquet`` layout for several
  captures), then records itself in ``OUT/_fleet/done/<key>.json``, last; a task killed half-way
  leaves no record and is redone;
* a capture that cannot be read is recorded with its error (``OUT/_fleet/failures.json``) and
  not retried unless ``retry_failed=True``;
* ``OUT/summary.json`` is the CLI's merged summary (``{"version": 1, "captures": [...]}``, one
  report object per capture, in input order).

>>> from sctp_analyzer import fleet
>>> result = fleet.run("captures/", "results/", address="auto")  # doctest: +SKIP
>>> result.analysed, result.skipped, result.failed  # doctest: +SKIP

Query the result with DuckDB or polars (``hive_partitioning``), or with Ray Data / Spark SQL.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import CaptureError, _native, analyze

__all__ = ["FleetResult", "Job", "analyse_job", "partition_value", "plan", "run"]

# Bytes read at a time when hashing a capture.
_HASH_BLOCK = 1 << 20
# Where the fleet keeps its records, beside the tables.
_STATE = "_fleet"


@dataclass(frozen=True)
class Job:
    """One capture of the fleet: ``files`` (one, or a rotated group in reading order) under the
    partition name ``name``; ``uri`` is set for a capture in an object store."""

    name: str
    files: tuple[str, ...]
    uri: str | None = None


@dataclass
class FleetResult:
    """What a run did. ``analysed``: captures analysed by this run; ``skipped``: already done
    (same bytes, same options) by an earlier run; ``failed``: name -> error of the captures that
    could not be read (this run's and earlier ones'); ``attempts``: name -> how many times Ray ran
    the capture's task in this run (above 1 when a worker died under it); ``seconds``: wall
    time; ``out``: the output folder."""

    out: str
    analysed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def _options(
    tcp: bool, chunks: bool, sctp_udp_ports: Sequence[int], deadline_ms: float | None
) -> dict[str, Any]:
    return {
        "tcp": tcp,
        "chunks": chunks,
        "sctp_udp_ports": sorted(set(int(p) for p in sctp_udp_ports)),
        "deadline_ms": deadline_ms,
    }


def partition_value(name: str) -> str:
    """The CLI's partition value of a capture (``capture=<value>``): the Rust
    ``frames::partition_value`` itself."""
    return _native.partition_value(name)


def _is_uri(s: str) -> bool:
    return "://" in s


def _partition_name(root: str | None, first: str, names: str) -> str:
    """The capture's partition name: its file name, as the CLI names it (``names="file"``), or
    its path below the input folder with ``__`` for ``/`` (``names="path"``:
    ``link7/2026-12-01T10.pcap`` -> ``link7__2026-12-01T10.pcap``), so that two links' files of
    the same name stay two partitions."""
    if names == "path" and root is not None:
        rel = os.path.relpath(first, root)
        if not rel.startswith(".."):
            return rel.replace(os.sep, "__").replace("/", "__")
    return os.path.basename(first)


def plan(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    rotated: bool = False,
    names: Literal["file", "path"] = "file",
) -> list[Job]:
    """The captures of ``inputs``: capture files and folders (searched recursively, as the CLI
    does), or one object-store prefix (``s3://bucket/prefix/``, ``gs://...``, ``file:///...``:
    every object whose name is a capture's, each one capture). ``rotated``: the files of each
    rotation of a local folder are one capture (the CLI's ``--rotated``). ``names``: how
    captures are named (see ``_partition_name``); two captures of one name are an error."""
    if names not in ("file", "path"):
        raise ValueError(f"names must be 'file' or 'path', not {names!r}")
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    given = [os.fspath(p) for p in inputs]
    if not given:
        raise ValueError("no capture file or folder given")
    uris = [g for g in given if _is_uri(g)]
    if uris:
        if len(given) > 1:
            raise ValueError("give one object-store prefix, or local files and folders")
        if rotated:
            raise ValueError(
                "rotated groups are formed from local files (their first packets are read); "
                "copy the rotation to a local folder first"
            )
        return _plan_uri(uris[0], names)
    groups = _native.captures(given, "rotated" if rotated else "each")
    root = given[0] if len(given) == 1 and os.path.isdir(given[0]) else None
    jobs = [Job(_partition_name(root, str(g[0]), names), tuple(str(f) for f in g)) for g in groups if g]
    seen: dict[str, Job] = {}
    for j in jobs:
        other = seen.setdefault(j.name, j)
        if other is not j:
            raise ValueError(
                f"two captures would share the partition capture={j.name}: "
                f"{other.files[0]} and {j.files[0]} (names=\"path\" names them by their folders)"
            )
    return jobs


def _plan_uri(prefix: str, names: str) -> list[Job]:
    from pyarrow import fs as pafs  # type: ignore[import-untyped]

    filesystem, base = pafs.FileSystem.from_uri(prefix)
    infos = filesystem.get_file_info(pafs.FileSelector(base, recursive=True))
    found = sorted(i.path for i in infos if i.type == pafs.FileType.File and _is_capture_name(i.path))
    scheme = prefix.split("://", 1)[0]
    jobs = []
    for path in found:
        rel = os.path.relpath(path, base.rstrip("/") or "/")
        uri = f"{scheme}://{path}" if scheme != "file" else f"file://{path}"
        name = rel.replace("/", "__") if names == "path" else os.path.basename(path)
        jobs.append(Job(name, (path,), uri=uri))
    return jobs


def _is_capture_name(path: str) -> bool:
    """What the CLI takes from a folder (``inputs::is_capture_name``, also ``x.pcap1``)."""
    return _native.is_capture_name(path)


def _open_binary(job: Job) -> Callable[[str], Any]:
    if job.uri is None:
        return lambda f: open(f, "rb")
    from pyarrow import fs as pafs

    filesystem, _ = pafs.FileSystem.from_uri(job.uri)
    return lambda f: filesystem.open_input_stream(f)


def _content_key(job: Job, options: dict[str, Any]) -> str:
    """SHA-256 of the capture's bytes (every file, in order), its name and paths, and the
    options."""
    h = hashlib.sha256()
    # The name and paths too: a byte-identical copy elsewhere is another capture (its report and
    # partition name it).
    ident = {
        "options": options,
        "version": _native.REPORT_VERSION,
        "name": job.name,
        "files": list(job.uri and [job.uri] or job.files),
    }
    h.update(json.dumps(ident, sort_keys=True).encode())
    opener = _open_binary(job)
    for f in job.files:
        h.update(b"\0file\0")
        with opener(f) as src:
            while True:
                block = src.read(_HASH_BLOCK)
                if not block:
                    break
                h.update(block)
    return h.hexdigest()


class _Manifest:
    """Keys of files already hashed, by (path, size, mtime): a second run hashes nothing that
    did not change (``OUT/_fleet/manifest.json``)."""

    def __init__(self, out: Path) -> None:
        self.path = out / _STATE / "manifest.json"
        try:
            self.entries: dict[str, Any] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.entries = {}

    @staticmethod
    def _stamp(job: Job) -> list[Any] | None:
        if job.uri is not None:
            return None
        try:
            stats = [(f, os.stat(f)) for f in job.files]
            return [[f, st.st_size, st.st_mtime_ns] for f, st in stats]
        except OSError:
            return None

    def key(self, job: Job, options: dict[str, Any]) -> str:
        stamp = self._stamp(job)
        entry_id = json.dumps([job.name, job.files, options], sort_keys=True)
        e = self.entries.get(entry_id)
        if stamp is not None and e is not None and e["stamp"] == stamp:
            return str(e["key"])
        key = _content_key(job, options)
        if stamp is not None:
            self.entries[entry_id] = {"stamp": stamp, "key": key}
        return key

    def save(self) -> None:
        _write_atomic(self.path, json.dumps(self.entries).encode())


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _done_path(out: Path, key: str) -> Path:
    return out / _STATE / "done" / f"{key}.json"


def analyse_job(job: Job, key: str, out: str, options: dict[str, Any]) -> dict[str, Any]:
    """Analyses one capture and writes its tables and its record: the work of one Ray task
    (callable without Ray too). Returns the record."""
    outp = Path(out)
    started = time.time()
    tmp_root = outp / _STATE / "tmp" / f"{key}-{uuid.uuid4().hex}"
    local_files = list(job.files)
    try:
        if job.uri is not None:
            # The analyzer reads local files: the object is copied beside the output first.
            local = tmp_root / "input" / os.path.basename(job.files[0])
            local.parent.mkdir(parents=True, exist_ok=True)
            opener = _open_binary(job)
            with opener(job.files[0]) as src, open(local, "wb") as sink:
                shutil.copyfileobj(src, sink, _HASH_BLOCK)
            local_files = [str(local)]
        frames: dict[str, Any] = {}
        try:
            analysis = analyze(
                local_files,
                tcp=options["tcp"],
                chunks=options["chunks"],
                sctp_udp_ports=options["sctp_udp_ports"],
                deadline_ms=options["deadline_ms"],
            )
            report, frames, error = analysis.report, analysis.tables, None
        except CaptureError as e:  # recorded, not raised: the CLI's entry for it
            report = json.loads(_native.failed_report(e.file, e.reason))
            error = str(e)
        if job.uri is not None:
            report["file"] = job.uri
        tables = sorted(frames)
        part = f"capture={partition_value(job.name)}"
        for table in tables:
            # The CLI's layout (`frames::write_partitioned`): the capture is the partition key.
            staged = tmp_root / "tables" / table / part
            staged.mkdir(parents=True, exist_ok=True)
            df = frames[table]
            if "capture" in df.columns:
                df = df.drop("capture")
            df.write_parquet(staged / "part.parquet")
        # Into place: each table's partition replaces an earlier run's.
        for table in tables:
            src = tmp_root / "tables" / table / part
            dst = outp / table / part
            dst.parent.mkdir(parents=True, exist_ok=True)
            if dst.exists():
                shutil.rmtree(dst)
            os.replace(src, dst)
        record = {
            "name": job.name,
            "files": list(job.uri and [job.uri] or job.files),
            "key": key,
            "error": error,
            "tables": tables,
            "report": report,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "seconds": round(time.time() - started, 3),
        }
        _write_atomic(_done_path(outp, key), json.dumps(record).encode())
        return record
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)


def _load_record(out: Path, key: str) -> dict[str, Any] | None:
    try:
        rec: dict[str, Any] = json.loads(_done_path(out, key).read_text())
        return rec
    except (OSError, ValueError):
        return None


def run(
    inputs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    address: str | None = None,
    rotated: bool = False,
    names: Literal["file", "path"] = "file",
    tcp: bool = True,
    chunks: bool = True,
    sctp_udp_ports: Sequence[int] = (),
    deadline_ms: float | None = None,
    retry_failed: bool = False,
    max_retries: int = 3,
    num_cpus: float = 1,
    node_ip_address: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> FleetResult:
    """Analyses every capture of ``inputs`` (see :func:`plan`) on a Ray cluster and writes the
    CLI's hive-partitioned tables and merged summary to ``out`` (a local or shared folder every
    worker can write). ``address``: the cluster (``"auto"``, ``"ray://head:10001"``; None starts
    a local Ray). ``rotated``, ``names``: see :func:`plan`. Captures already done with the same bytes and options are skipped. A task runs
    again (up to ``max_retries`` times) when its worker or node dies. ``num_cpus``: CPUs a task
    reserves. ``node_ip_address``: this driver's address in the cluster (e.g. ``"127.0.0.1"`` for a
    cluster on loopback). ``progress(done, total)`` is called as captures finish. Options as in
    :func:`sctp_analyzer.analyze`, except ``chunks``: on by default, as the CLI's
    ``--format parquet`` has it (the ``chunks`` table, one row per chunk)."""
    import ray

    t0 = time.perf_counter()
    outp = Path(out)
    outp.mkdir(parents=True, exist_ok=True)
    options = _options(tcp, chunks, sctp_udp_ports, deadline_ms)
    jobs = plan(inputs, rotated=rotated, names=names)
    manifest = _Manifest(outp)
    keys = [manifest.key(j, options) for j in jobs]
    manifest.save()
    result = FleetResult(out=str(outp))
    todo: list[tuple[Job, str]] = []
    for job, key in zip(jobs, keys):
        rec = _load_record(outp, key)
        if rec is not None and (rec["error"] is None or not retry_failed):
            result.skipped.append(job.name)
        else:
            todo.append((job, key))
    if todo:
        for _, key in todo:
            shutil.rmtree(outp / _STATE / "attempts" / key, ignore_errors=True)
        if not ray.is_initialized():
            if node_ip_address is None:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False, _node_ip_address=node_ip_address)
        task = ray.remote(num_cpus=num_cpus, max_retries=max_retries, retry_exceptions=False)(_task)
        pending = {task.remote(job, key, str(outp.resolve()), options): job for job, key in todo}
        done = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                job = pending.pop(ref)
                rec = ray.get(ref)
                result.analysed.append(job.name)
                result.attempts[job.name] = _attempts(outp, rec["key"])
                done += 1
                if progress is not None:
                    progress(done, len(todo))
    records = [_load_record(outp, k) for k in keys]
    captures = []
    for job, rec in zip(jobs, records):
        if rec is None:  # cannot happen after a successful run; say so rather than hide it
            raise RuntimeError(f"{job.name}: no record after the run")
        captures.append(rec["report"])
        if rec["error"] is not None:
            result.failed[job.name] = rec["error"]
    _write_atomic(
        outp / "summary.json",
        json.dumps({"version": _native.REPORT_VERSION, "captures": captures}).encode(),
    )
    _write_atomic(outp / _STATE / "failures.json", json.dumps(result.failed, indent=1).encode())
    result.seconds = time.perf_counter() - t0
    return result


def _task(job: Job, key: str, out: str, options: dict[str, Any]) -> dict[str, Any]:
    """The Ray task: ``analyse_job``, after leaving a mark of this attempt
    (``OUT/_fleet/attempts/<key>/``: the driver counts them, so a task that Ray ran again after
    its worker died shows 2), and skipping a capture an earlier attempt already finished."""
    marks = Path(out) / _STATE / "attempts" / key
    marks.mkdir(parents=True, exist_ok=True)
    (marks / f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex}").write_text(job.name)
    rec = _load_record(Path(out), key)
    if rec is None:
        rec = analyse_job(job, key, out, options)
    return rec


def _attempts(out: Path, key: str) -> int:
    try:
        return len(os.listdir(out / _STATE / "attempts" / key))
    except OSError:
        return 0
