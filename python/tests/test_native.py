"""The native half of the package against the command line, on the repository's fixtures.

Build first (docs/python.md): ``maturin develop -m python/pyproject.toml``. The CLI
compared with is ``$KINETOSCOPE_BIN`` (a cargo-built binary), else the console script.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kinetoscope

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "crates" / "kinetoscope-trace" / "tests" / "fixtures"
GPU = FIXTURES / "worker0.1623143089861.pt.trace.json.gz"
RANKS = FIXTURES / "ranks"
# A recent trace with `record_function` ranges and a defect `check` reports.
RECENT = FIXTURES / "torch-2.9.1_tb_w0.1795239753636344596.pt.trace.json.gz"


def cli() -> list:
    exe = os.environ.get("KINETOSCOPE_BIN") or shutil.which("kinetoscope")
    assert exe, "no kinetoscope binary: set KINETOSCOPE_BIN or install the package"
    return [exe]


def cli_json(*args: str) -> dict:
    out = subprocess.run(cli() + list(args) + ["--format", "json"], capture_output=True, check=True)
    return json.loads(out.stdout)


def walk(doc, levels):
    """Rows of a table counted from the CLI's JSON: each level a list (or one object)."""
    items = [doc]
    for field in levels:
        nxt = []
        for it in items:
            v = it.get(field)
            nxt.extend(v if isinstance(v, list) else [v] if isinstance(v, dict) else [])
        items = nxt
    return len(items)


# table → (path, CLI arguments giving the same document, levels down to the rows)
TABLES = {
    "summary": (GPU, ["summary"], ["traces"]),
    "steps": (GPU, ["summary"], ["traces", "steps"]),
    "overview": (GPU, ["overview"], ["traces", "steps"]),
    "gpus": (GPU, ["overview"], ["traces", "gpus"]),
    "ops": (GPU, ["ops", "--top", "0"], ["traces", "rows"]),
    "kernels": (GPU, ["kernels", "--top", "0"], ["traces", "rows"]),
    "perf": (GPU, ["perf", "--top", "0"], ["traces", "rows"]),
    "perf_families": (GPU, ["perf", "--top", "0"], ["traces", "families"]),
    "temporal": (GPU, ["temporal"], ["traces"]),
    "idle": (GPU, ["idle"], ["traces", "streams", "categories"]),
    "launches": (GPU, ["launches"], ["traces", "steps"]),
    "kernel_classes": (GPU, ["kernels", "--by-class"], ["traces", "classes"]),
    "comm": (RANKS, ["comm"], ["traces", "collectives"]),
    "comm_steps": (RANKS, ["comm"], ["traces", "steps"]),
    "ranks": (RANKS, ["ranks", "--top", "0"], ["report", "ranks"]),
    "rank_steps": (RANKS, ["ranks", "--top", "0"], ["report", "steps"]),
    "stragglers": (RANKS, ["ranks", "--top", "0"], ["report", "stragglers"]),
    "nvtx": (RECENT, ["nvtx"], ["traces", "ranges"]),
    "sequences": (GPU, ["sequences"], ["traces", "sequences"]),
    "check": (RECENT, ["check"], ["traces", "defects"]),
    "findings": (GPU, ["report"], ["findings"]),
}


@pytest.fixture(scope="module")
def gpu():
    return kinetoscope.open(GPU)


@pytest.fixture(scope="module")
def ranks():
    return kinetoscope.open(RANKS)


@pytest.fixture(scope="module")
def opened(gpu, ranks):
    return {GPU: gpu, RANKS: ranks, RECENT: kinetoscope.open(RECENT)}


def test_every_table_is_tested():
    assert sorted(TABLES) == sorted(name for name, _ in kinetoscope.Trace.table_names())


@pytest.mark.parametrize("name", sorted(TABLES))
def test_table_rows_equal_the_cli_json(name, opened):
    path, args, levels = TABLES[name]
    expected = walk(cli_json(args[0], str(path), *args[1:]), levels)
    # Each table's fixture has rows, so the count compares something.
    assert expected > 0
    table = opened[path].table(name)
    assert len(table) == expected
    assert table.num_columns > 0
    assert len(table.to_pandas()) == expected


def test_a_table_without_rows_is_empty(gpu, opened):
    assert gpu.check()["traces"][0]["defects"] == []
    empty = gpu.table("check")
    assert len(empty) == 0
    # Still the table's columns: those it has where it has rows.
    full = opened[RECENT].table("check")
    assert len(full) > 0
    assert empty.column_names == full.column_names
    assert len(empty.to_pandas().columns) == full.num_columns


def test_ops_table_columns_and_values(gpu):
    doc = gpu.ops()
    table = gpu.table("ops").to_pandas()
    rows = doc["traces"][0]["rows"]
    assert list(table.columns[:3]) == ["path", "rank", "name"]
    assert list(table["name"]) == [r["name"] for r in rows]
    assert list(table["device_self_ns"]) == [r["device_self_ns"] for r in rows]
    assert str(table["device_self_ns"].dtype) == "int64"


def test_table_takes_the_view_options(gpu):
    assert len(gpu.table("ops", top=3)) == 3
    shapes = gpu.table("ops", group_by="shape")
    assert "input_shape" in shapes.column_names


@pytest.mark.parametrize(
    "view,args",
    [
        ("summary", ["summary"]),
        ("overview", ["overview"]),
        ("ops", ["ops", "--top", "0"]),
        ("kernels", ["kernels", "--top", "0"]),
        ("temporal", ["temporal"]),
        ("idle", ["idle"]),
        ("check", ["check"]),
    ],
)
def test_documents_equal_the_cli_json(view, args, gpu):
    expected = cli_json(args[0], str(GPU), *args[1:])
    assert getattr(gpu, view)() == expected


def test_ranks_document_equals_the_cli_json(ranks):
    assert ranks.ranks() == cli_json("ranks", str(RANKS), "--top", "0")


def test_events_count_and_schema(gpu):
    events = gpu.events()
    assert len(events) == gpu.check()["traces"][0]["events"]
    assert events.column_names[:6] == ["path", "name", "category", "phase", "ts_ns", "dur_ns"]
    assert str(events.schema.field("ts_ns").type) == "int64"
    assert str(events.schema.field("name").type).startswith("dictionary")
    df = events.to_pandas()
    kernels = df[df["category"] == "kernel"]
    assert len(kernels) == gpu.summary()["traces"][0]["events_by_category"]["kernel"]
    assert kernels["stream"].notna().all()


def test_events_of_a_folder_have_each_file(ranks):
    events = ranks.events().to_pandas()
    assert events["path"].nunique() == 2
    per_trace = [t["events"] for t in ranks.check()["traces"]]
    assert len(events) == sum(per_trace)


def test_parse_once(gpu):
    fresh = kinetoscope.open(GPU)
    assert fresh.files_read == 1
    fresh.ops()
    fresh.kernels(sort="calls")
    fresh.table("overview")
    fresh.events()
    fresh.report()
    assert fresh.files_read == 1


def test_documents_are_kept_per_view_and_keywords(gpu):
    fresh = kinetoscope.open(GPU)
    first = fresh.ops(top=3)
    # A caller may change what it was given: the next call returns the document again.
    first["traces"][0]["rows"].clear()
    again = fresh.ops(top=3)
    assert len(again["traces"][0]["rows"]) == 3
    assert again == cli_json("ops", str(GPU), "--top", "3")
    # Other keywords are another document.
    assert len(fresh.ops(top=2)["traces"][0]["rows"]) == 2
    assert len(fresh.table("ops", top=3)) == 3


def test_parse_once_folder():
    t = kinetoscope.open(RANKS)
    assert t.files_read == 2
    t.ranks()
    t.table("comm")
    assert t.files_read == 2


def test_missing_file_names_the_file(tmp_path):
    missing = tmp_path / "no_such_trace.json"
    with pytest.raises(kinetoscope.KinetoscopeError, match="no_such_trace.json"):
        kinetoscope.open(missing)
    assert issubclass(kinetoscope.KinetoscopeError, Exception)


def test_bad_options(gpu):
    with pytest.raises(ValueError, match="sort"):
        gpu.ops(sort="sideways")
    with pytest.raises(TypeError, match="unexpected keyword"):
        gpu._native.ops(colour="red")
    with pytest.raises(ValueError, match="no table named"):
        gpu.table("nope")


def test_diff_equals_the_cli_json():
    doc = kinetoscope.diff(GPU, GPU)
    assert doc == cli_json("diff", str(GPU), str(GPU))
    assert doc["gate"]["passed"] is True


def run(args):
    return subprocess.run(args, capture_output=True)


def test_python_m_summary_equals_the_binary():
    ours = run([sys.executable, "-m", "kinetoscope", "summary", str(GPU)])
    theirs = run(cli() + ["summary", str(GPU)])
    assert ours.returncode == 0 == theirs.returncode
    assert ours.stdout == theirs.stdout
    assert len(ours.stdout) > 0


def test_console_script_exit_codes_and_streams(tmp_path):
    script = shutil.which("kinetoscope")
    assert script, "the console script is installed with the package"
    ok = run([script, "summary", str(GPU), "--format", "json"])
    assert ok.returncode == 0 and json.loads(ok.stdout)["schema_version"] == 3
    missing = run([script, "summary", str(tmp_path / "gone.json")])
    assert missing.returncode == 2
    assert b"gone.json" in missing.stderr and missing.stdout == b""
    usage = run([script, "--no-such-flag"])
    assert usage.returncode == 2 and b"--no-such-flag" in usage.stderr
    helped = run([script, "--help"])
    assert helped.returncode == 0 and b"Usage" in helped.stdout


def test_ctrl_c_stops_the_command(tmp_path):
    import signal
    import time

    script = shutil.which("kinetoscope")
    proc = subprocess.Popen(
        [script, "serve", str(GPU), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(3)
        assert proc.poll() is None, proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == -signal.SIGINT
    finally:
        if proc.poll() is None:
            proc.kill()
