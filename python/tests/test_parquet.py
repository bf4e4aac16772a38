"""``kinetoscope export --parquet`` read back with DuckDB and Polars.

The binary is ``$KINETOSCOPE_BIN`` (a cargo-built binary), else the console script. The
export of PARAM's real 8-rank DLRM job (8x V100, NCCL) must read in both engines with
the documented columns and types (docs/parquet.md), and its row counts must equal the
binary's own JSON views of the same traces.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[2]
RANKS = ROOT / "crates/kinetoscope-analysis/tests/fixtures/param/dlrm_kineto"

# Table -> (column, Polars type) in order, as docs/parquet.md documents them.
SCHEMA = {
    "ranks": [("rank", pl.Int64), ("path", pl.String), ("world_size", pl.Int64),
              ("steps", pl.Int64), ("collectives", pl.Int64), ("comm_kernel_ns", pl.Int64),
              ("warnings_json", pl.String)],
    "steps": [("rank", pl.Int64), ("step_index", pl.Int32), ("name", pl.String),
              ("number", pl.Int64), ("start_ns", pl.Int64), ("dur_ns", pl.Int64),
              ("kernel_ns", pl.Int64), ("memcpy_ns", pl.Int64), ("memset_ns", pl.Int64),
              ("communication_ns", pl.Int64), ("runtime_ns", pl.Int64),
              ("dataloader_ns", pl.Int64), ("cpu_exec_ns", pl.Int64), ("other_ns", pl.Int64)],
    "kernels_per_step": [("rank", pl.Int64), ("step_index", pl.Int32), ("step", pl.Int64),
                         ("name", pl.String), ("count", pl.Int64), ("total_ns", pl.Int64),
                         ("min_ns", pl.Int64), ("max_ns", pl.Int64)],
    "ops": [("rank", pl.Int64), ("name", pl.String), ("calls", pl.Int64),
            ("launching_calls", pl.Int64), ("host_self_ns", pl.Int64),
            ("host_total_ns", pl.Int64), ("device_self_ns", pl.Int64),
            ("device_total_ns", pl.Int64), ("tc_eligible", pl.Boolean),
            ("tc_self_ns", pl.Int64), ("tc_total_ns", pl.Int64)],
    "collectives": [("rank", pl.Int64), ("process_group", pl.String),
                    ("process_group_desc", pl.String), ("collective", pl.String),
                    ("name", pl.String), ("algorithm", pl.String), ("dtype", pl.String),
                    ("group_size", pl.Int64), ("bytes", pl.Int64), ("seq_num", pl.Int64),
                    ("comms_id", pl.Int64), ("step", pl.Int64), ("call_ns", pl.Int64),
                    ("call_recorded", pl.Boolean), ("start_ns", pl.Int64),
                    ("end_ns", pl.Int64), ("stream", pl.Int64), ("on_gpu", pl.Boolean)],
    "memory_per_step": [("rank", pl.Int64), ("step_index", pl.Int32), ("step", pl.Int64),
                        ("device_type", pl.Int64), ("device_id", pl.Int64),
                        ("records", pl.Int64), ("peak_allocated_bytes", pl.Int64),
                        ("peak_reserved_bytes", pl.Int64), ("capacity_bytes", pl.Int64)],
    "events": [("rank", pl.Int64), ("ts_ns", pl.Int64), ("dur_ns", pl.Int64),
               ("track", pl.Int32), ("category", pl.Categorical), ("phase", pl.Categorical),
               ("name_id", pl.Int32), ("correlation", pl.Int64), ("external_id", pl.Int64),
               ("device", pl.Int64), ("stream", pl.Int64)],
    "strings": [("rank", pl.Int64), ("id", pl.Int32), ("string", pl.String)],
}


def cli() -> list:
    exe = os.environ.get("KINETOSCOPE_BIN") or shutil.which("kinetoscope")
    assert exe, "no kinetoscope binary: set KINETOSCOPE_BIN or install the package"
    return [exe]


def cli_json(*args: str) -> dict:
    out = subprocess.run(cli() + list(args) + ["--format", "json"], capture_output=True, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("parquet") / "out"
    cli_json("export", str(RANKS), "--parquet", str(out))
    return out


def test_polars_reads_every_table_with_the_documented_schema(export: Path) -> None:
    manifest = json.loads((export / "kinetoscope-parquet.json").read_text())
    assert manifest["schema_version"] == 1
    assert manifest["tables"] == list(SCHEMA)
    for table, columns in SCHEMA.items():
        df = pl.read_parquet(export / table / "*.parquet")
        assert list(zip(df.columns, df.dtypes)) == columns, table
        assert len(df) == sum(r["rows"][table] for r in manifest["ranks"]), table
        if table != "memory_per_step":  # this job recorded no memory events
            assert sorted(df["rank"].unique().to_list()) == list(range(8)), table


def test_duckdb_counts_equal_the_cli_views(export: Path) -> None:
    def count(sql: str) -> list:
        return duckdb.sql(sql).fetchall()

    def glob(table: str) -> str:
        return f"'{export / table}/*.parquet'"

    overview = cli_json("overview", str(RANKS))
    steps = dict(count(f"SELECT rank, count(*) FROM {glob('steps')} GROUP BY rank"))
    assert steps == {t["rank"]: len(t["steps"]) for t in overview["traces"]}

    comm = cli_json("comm", str(RANKS))
    colls = dict(count(f"SELECT rank, count(*) FROM {glob('collectives')} GROUP BY rank"))
    assert colls == {t["rank"]: sum(c["count"] for c in t["collectives"]) for t in comm["traces"]}
    assert all(n > 0 for n in colls.values())

    ops = cli_json("ops", str(RANKS), "--top", "0")
    rows = dict(count(f"SELECT rank, count(*) FROM {glob('ops')} GROUP BY rank"))
    assert rows == {t["rank"]: len(t["rows"]) for t in ops["traces"]}

    # The rank comparison's step times are the steps table's.
    ranks = cli_json("ranks", str(export))
    for r in ranks["report"]["ranks"]:
        (mean,) = count(f"SELECT avg(dur_ns) FROM {glob('steps')} WHERE rank = {r['rank']}")[0]
        assert mean == pytest.approx(r["mean_step_ns"]), r

    # Names join through the strings table: every event has its name.
    (missing,) = count(
        f"SELECT count(*) FROM {glob('events')} e LEFT JOIN {glob('strings')} s "
        "ON s.rank = e.rank AND s.id = e.name_id WHERE s.string IS NULL"
    )[0]
    assert missing == 0
