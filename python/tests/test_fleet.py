"""The fleet job on a real local Ray cluster (a head and two worker nodes, each its own `ray
start` process) over 200 generated captures and one that cannot be read: every capture's tables
and summary equal the CLI's, a worker killed mid-run has its captures redone, a second run does
no work, and a changed capture is the only one redone.

The captures come from `make_big_capture` (the analyzer's example, built by `cargo test`): the
four lab traces of the speed benchmark's batch in turn, each repeated with shifted tags and ports.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from sctp_analyzer import fleet

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample-traces"
SOURCES = [
    "cut_p20_sack40_sender.pcap",
    "sparse_sack200_sender.pcap",
    "spur_pmr1_rtomin30_sender.pcap",
    "spike_p20_rtomin100_sender.pcap",
]
N_CAPTURES = 200
BIG = ["big0.pcap", "big1.pcap", "big2.pcap"]


def _target() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")).resolve()


def _cli() -> Path:
    env = os.environ.get("SCTP_ANALYZER_BIN")
    return Path(env) if env else _target() / "debug" / "sctp-analyzer"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gen = _target() / "debug" / "examples" / "make_big_capture"
    if not gen.exists():
        pytest.fail(f"not built: {gen} (cargo test --workspace --no-run builds it)")
    d = tmp_path_factory.mktemp("fleet-captures")
    for i in range(N_CAPTURES - len(BIG)):
        src = SAMPLES / SOURCES[i % len(SOURCES)]
        subprocess.run([gen, src, d / f"c{i:03d}.pcap", "0.1"], check=True, capture_output=True)
    # A few long ones: in flight long enough for the test to kill the worker analysing them.
    for name in BIG:
        subprocess.run([gen, SAMPLES / SOURCES[0], d / name, "8"], check=True, capture_output=True)
    # One capture that cannot be read: recorded with its error, as the CLI reports it.
    (d / "zz_broken.pcap").write_bytes(b"not a capture at all")
    return d


@pytest.fixture(scope="module")
def cli_out(captures: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli-out")
    subprocess.run(
        [_cli(), "analyze", "--format", "parquet", "--no-progress", "--jobs", "2", "--out", out, captures],
        check=False,
        capture_output=True,
    )
    assert (out / "summary.json").exists()
    return out


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A head (no CPU: it schedules only) and two worker nodes of one CPU each, every one its own
    `ray start` process tree, on loopback."""
    ray_bin = str(Path(sys.executable).parent / "ray")
    port = _free_port()
    tmp = Path(tempfile_dir()) / f"ray-{port}"
    # Token authentication off: a token another Ray left in ~/.ray must not lock these nodes out.
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    head = [ray_bin, "start", "--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=0",
            "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={tmp}"]
    subprocess.run(head, check=True, capture_output=True, env=env, timeout=180)
    address = f"127.0.0.1:{port}"
    try:
        for _ in range(2):
            subprocess.run([ray_bin, "start", f"--address={address}", "--node-ip-address=127.0.0.1",
                            "--num-cpus=1"], check=True, capture_output=True, env=env, timeout=180)
        yield address
    finally:
        subprocess.run([ray_bin, "stop", "--force"], check=False, capture_output=True, env=env, timeout=120)
        shutil.rmtree(tmp, ignore_errors=True)


def tempfile_dir() -> str:
    # Ray's socket paths must stay short (AF_UNIX: 107 bytes): not pytest's deep temp dirs.
    return "/tmp"


def _run_fleet(captures: Path, out: Path, address: str, *, kill_after: int | None = None) -> dict[str, Any]:
    """Runs the fleet job in its own driver process (as a user would), optionally killing every
    running task's worker process once `kill_after` captures are done; returns its result."""
    code = (
        "import json, sys\n"
        "from sctp_analyzer import fleet\n"
        "r = fleet.run(sys.argv[1], sys.argv[2], address=sys.argv[3], node_ip_address='127.0.0.1')\n"
        "open(sys.argv[4], 'w').write(json.dumps({'analysed': r.analysed, 'skipped': r.skipped,"
        " 'failed': r.failed, 'attempts': r.attempts, 'seconds': r.seconds}))\n"
    )
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    result_file = out.with_name(out.name + f"-result-{time.monotonic_ns()}.json")
    driver = subprocess.Popen([sys.executable, "-c", code, str(captures), str(out), address, str(result_file)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    killed: list[str] = []
    if kill_after is not None:
        def killer() -> None:
            """Kills (SIGKILL) the worker process of each long capture's first attempt, found
            by the mark the task leaves as it starts (`OUT/_fleet/attempts/<key>/<host>-<pid>-*`,
            holding the capture's name) while the capture has no record yet."""
            attempts = out / "_fleet" / "attempts"
            done = out / "_fleet" / "done"
            while driver.poll() is None and len(killed) < kill_after:
                for key_dir in attempts.iterdir() if attempts.exists() else []:
                    marks = list(key_dir.iterdir())
                    if len(marks) != 1 or (done / f"{key_dir.name}.json").exists():
                        continue
                    name = marks[0].read_text()
                    if name in BIG and name not in killed:
                        pid = int(marks[0].name.split("-")[-2])
                        try:
                            os.kill(pid, signal.SIGKILL)
                            killed.append(name)
                        except ProcessLookupError:
                            pass
                time.sleep(0.01)
        t = threading.Thread(target=killer)
        t.start()
    stdout, stderr = driver.communicate(timeout=900)
    if kill_after is not None:
        t.join()
    assert driver.returncode == 0, stderr[-3000:]
    result: dict[str, Any] = json.loads(result_file.read_text())
    result["killed"] = killed
    return result


def _table_names(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.is_dir() and not p.name.startswith("_"))


def _same_tables(cli_out: Path, fleet_out: Path) -> None:
    assert _table_names(cli_out) == _table_names(fleet_out)
    for table in _table_names(cli_out):
        cli_parts = sorted(p.name for p in (cli_out / table).iterdir())
        fleet_parts = sorted(p.name for p in (fleet_out / table).iterdir())
        assert cli_parts == fleet_parts, table
        for part in cli_parts:
            a = pl.read_parquet(cli_out / table / part / "part.parquet")
            b = pl.read_parquet(fleet_out / table / part / "part.parquet")
            assert a.equals(b, null_equal=True), f"{table}/{part}"


def _summary(d: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((d / "summary.json").read_text())
    return doc


def test_fleet_equals_cli_survives_a_killed_worker_and_reruns_nothing(
    captures: Path, cli_out: Path, cluster: str, tmp_path: Path
) -> None:
    out = tmp_path / "fleet"
    first = _run_fleet(captures, out, cluster, kill_after=len(BIG))
    assert len(first["analysed"]) == N_CAPTURES + 1
    assert first["skipped"] == []
    assert list(first["failed"]) == ["zz_broken.pcap"]
    # The workers killed mid-task: their captures ran again (a second attempt), and finished.
    # (Each long capture whose first attempt the killer caught in flight: at least one.)
    assert first["killed"], "the killer found no long capture in flight"
    for name in first["killed"]:
        assert first["attempts"][name] >= 2, (name, first["attempts"][name])
    _same_tables(cli_out, out)
    assert _summary(out) == _summary(cli_out)

    # A second run: nothing analysed, nothing hashed again, the same results.
    second = _run_fleet(captures, out, cluster)
    assert second["analysed"] == []
    assert len(second["skipped"]) == N_CAPTURES + 1
    assert list(second["failed"]) == ["zz_broken.pcap"]
    _same_tables(cli_out, out)

    # A changed capture is the only one redone.
    changed = captures / "c007.pcap"
    shutil.copy(SAMPLES / SOURCES[0], changed)
    try:
        third = _run_fleet(captures, out, cluster)
        assert third["analysed"] == ["c007.pcap"]
        one = subprocess.run([_cli(), "analyze", "--format", "json", "--no-progress", changed],
                             check=True, capture_output=True)
        want = json.loads(one.stdout)["captures"][0]
        got = next(c for c in _summary(out)["captures"] if c["file"] == str(changed))
        assert got == want
    finally:
        subprocess.run([_target() / "debug" / "examples" / "make_big_capture",
                        SAMPLES / SOURCES[7 % len(SOURCES)], changed, "0.1"], check=True,
                       capture_output=True)
        _run_fleet(captures, out, cluster)


def test_object_store_prefix(captures: Path, tmp_path: Path) -> None:
    """An object-store prefix (here `file://`, the same pyarrow filesystem code as `s3://`):
    each object one capture, named by its key, its report naming its URI; run without a
    cluster address (a local Ray)."""
    src = tmp_path / "bucket" / "links" / "link1"
    src.mkdir(parents=True)
    for name in ["c000.pcap", "c001.pcap"]:
        shutil.copy(captures / name, src / name)
    jobs = fleet.plan(f"file://{tmp_path / 'bucket'}", names="path")
    assert [j.name for j in jobs] == ["links__link1__c000.pcap", "links__link1__c001.pcap"]
    out = tmp_path / "out"
    rec = fleet.analyse_job(jobs[0], "k0", str(out), fleet._options(True, False, (), None))
    assert rec["error"] is None
    assert rec["report"]["file"] == f"file://{src / 'c000.pcap'}"
    direct = subprocess.run([_cli(), "analyze", "--format", "json", "--no-progress", src / "c000.pcap"],
                            check=True, capture_output=True)
    want = json.loads(direct.stdout)["captures"][0]
    got = dict(rec["report"], file=want["file"])
    assert got == want


def test_plan_names_and_collisions(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(SAMPLES / SOURCES[1], tmp_path / "a" / "x.pcap")
    shutil.copy(SAMPLES / SOURCES[2], tmp_path / "b" / "x.pcap")
    names = sorted(j.name for j in fleet.plan(tmp_path, names="path"))
    assert names == ["a__x.pcap", "b__x.pcap"]
    with pytest.raises(ValueError, match="share the partition"):
        fleet.plan(tmp_path)
    with pytest.raises(ValueError, match="share the partition"):
        fleet.plan([tmp_path / "a" / "x.pcap", tmp_path / "b" / "x.pcap"])
    assert fleet.partition_value("dir/a b+ü.pcap") == "a_b__.pcap"
    with pytest.raises(ValueError, match="no capture"):
        fleet.plan([])


def test_every_sample_trace_equals_cli(tmp_path: Path) -> None:
    """The fleet's task (`analyse_job`, what a Ray worker runs) on every sample trace and every
    capture of the broken-input corpus: the same tables and the same summary entries as the
    CLI's `--format parquet` over the same files."""
    files = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".pcap", ".pcapng"))
    files += sorted(p for p in (SAMPLES / "broken").iterdir() if ".pcap" in p.name)
    cli_out = tmp_path / "cli"
    subprocess.run([_cli(), "analyze", "--format", "parquet", "--no-progress", "--out", cli_out, *files],
                   check=False, capture_output=True)
    out = tmp_path / "fleet"
    options = fleet._options(True, True, (), None)
    jobs = fleet.plan(files)
    assert len(jobs) == len(files)
    reports = [fleet.analyse_job(j, f"k{i}", str(out), options)["report"] for i, j in enumerate(jobs)]
    _same_tables(cli_out, out)
    assert reports == _summary(cli_out)["captures"]
