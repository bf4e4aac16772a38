"""The Parquet export's map on a real ``dask.distributed`` cluster (a LocalCluster of
worker processes) against the single-process ``kinetoscope export``, and the reduce on
one node (``kinetoscope ranks`` and DuckDB) over the result.

The input is PARAM's real 8-rank DLRM job (8x V100, NCCL). The binary is
``$KINETOSCOPE_BIN`` (a cargo-built binary), else the console script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from dask.distributed import Client, LocalCluster

import kinetoscope
import kinetoscope.distributed

ROOT = Path(__file__).resolve().parents[2]
RANKS = ROOT / "crates/kinetoscope-analysis/tests/fixtures/param/dlrm_kineto"


def cli(*args: str) -> subprocess.CompletedProcess:
    exe = os.environ.get("KINETOSCOPE_BIN") or shutil.which("kinetoscope")
    assert exe, "no kinetoscope binary: set KINETOSCOPE_BIN or install the package"
    return subprocess.run([exe, *args], capture_output=True, check=True)


def cli_json(*args: str) -> dict:
    return json.loads(cli(*args, "--format", "json").stdout)


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """The same folder exported in one process and on a 3-worker Dask cluster."""
    base = tmp_path_factory.mktemp("exports")
    single, spread = base / "single", base / "dask"
    cli("export", str(RANKS), "--parquet", str(single))
    with LocalCluster(
        n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        worker_pids = set(client.run(os.getpid).values())
        doc = kinetoscope.distributed.export(str(RANKS), client, spread, threads_per_task=1)
    assert len(worker_pids) == 3 and os.getpid() not in worker_pids
    return single, spread, doc


def test_the_map_ran_one_task_per_rank(exports):
    _, spread, doc = exports
    files = kinetoscope.distributed.trace_files(RANKS)
    assert len(files) == 8
    assert [r["source"] for r in doc["manifest"]["ranks"]] == files
    assert sorted(r["rank"] for r in doc["manifest"]["ranks"]) == list(range(8))
    assert not any(p.name.startswith(".kinetoscope-staging") for p in spread.iterdir())


def test_manifest_equals_the_single_process_one(exports):
    single, spread, doc = exports
    a = json.loads((single / "kinetoscope-parquet.json").read_text())
    b = json.loads((spread / "kinetoscope-parquet.json").read_text())
    assert a == b
    assert doc["manifest"] == b


def test_every_table_file_equals_the_single_process_one(exports):
    single, spread, _ = exports
    files = sorted(p.relative_to(single) for p in single.rglob("*.parquet"))
    assert len(files) == 8 * len(json.loads((single / "kinetoscope-parquet.json").read_text())["tables"])
    assert files == sorted(p.relative_to(spread) for p in spread.rglob("*.parquet"))
    for f in files:
        a, b = pq.read_table(single / f), pq.read_table(spread / f)
        assert a.schema == b.schema, f
        assert a.equals(b), f


def test_the_reduce_on_one_node(exports):
    _, spread, _ = exports
    from_traces = cli_json("ranks", str(RANKS))
    from_parquet = cli_json("ranks", str(spread))
    from_traces.pop("input")
    from_parquet.pop("input")
    assert from_parquet == from_traces
    # DuckDB over the same tables: each rank's steps and mean step, and each step's
    # slowest rank time, as the ranks document gives them.
    glob = f"read_parquet('{spread}/steps/*.parquet')"
    per_rank = duckdb.sql(
        f"SELECT rank, count(*), avg(dur_ns) FROM {glob} GROUP BY rank ORDER BY rank"
    ).fetchall()
    ranks = {r["rank"]: r for r in from_traces["report"]["ranks"]}
    assert [r[0] for r in per_rank] == sorted(ranks) == list(range(8))
    for rank, steps, mean_ns in per_rank:
        assert steps == ranks[rank]["steps"]
        assert mean_ns == pytest.approx(ranks[rank]["mean_step_ns"])
    per_step = dict(duckdb.sql(f"SELECT name, max(dur_ns) FROM {glob} GROUP BY name").fetchall())
    assert per_step == {s["name"]: s["max_ns"] for s in from_traces["report"]["steps"]}


def test_a_trace_that_cannot_be_read_is_in_the_manifest(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    for name in sorted(os.listdir(RANKS))[:2]:
        shutil.copy(RANKS / name, folder / name)
    # Binary data: not a trace in any mode (a truncated JSON trace would be read
    # leniently, with what it holds).
    (folder / "rank7.pt.trace.json").write_bytes(b"PK\x03\x04 not a trace")
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, Client(cluster) as client:
        doc = kinetoscope.distributed.export(folder, client, tmp_path / "out")
    assert len(doc["manifest"]["ranks"]) == 2
    [err] = doc["manifest"]["errors"]
    assert err["path"].endswith("rank7.pt.trace.json")
    assert "not a Kineto Chrome trace" in err["error"]


def test_an_output_holding_other_files_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(kinetoscope.KinetoscopeError, match="notes.txt"):
        # No cluster needed: the output is checked before any task.
        kinetoscope.distributed.export(RANKS, None, out)
    assert (out / "notes.txt").read_text() == "mine"
