"""Tests of `kinetoscope.capture` on CPU torch: a real 2-layer MLP run recorded in two
phases, its files, the plan against the steps in the traces, the kinetoscope binary
reading the folder, and the schedule arithmetic against torch's own.

The kinetoscope binary is `$KINETOSCOPE_BIN`, else `kinetoscope` on PATH; the tests that
need it fail (never skip) when there is neither.
"""

import io
import itertools
import json
import os
import pstats
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from kinetoscope import capture  # noqa: E402
from kinetoscope._capture_names import PhaseNames, check_phase_name  # noqa: E402
from kinetoscope._capture_output import CYAN, Progress  # noqa: E402
from kinetoscope._capture_phase import _quiet_warmup_warning  # noqa: E402
from kinetoscope._capture_schedule import Schedule  # noqa: E402

STEPS = 8
SCHEDULE = dict(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
CPU_TABLES = ["cpu_time_total", "self_cpu_memory_usage", "self_cpu_time_total"]


def kinetoscope_bin():
    """The kinetoscope binary; fails the test when there is none."""
    path = os.environ.get("KINETOSCOPE_BIN") or shutil.which("kinetoscope")
    if not path or not os.path.isfile(path):
        pytest.fail("no kinetoscope binary: set KINETOSCOPE_BIN or put kinetoscope on PATH")
    return path


def train(run, steps=STEPS):
    """The tiny run: a 2-layer MLP built in one phase, trained `steps` steps in another."""
    torch.manual_seed(0)
    with run.phase("model_init", scheduled=False):
        model = torch.nn.Sequential(
            torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)
        )
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with run.phase("train"):
        for _ in range(steps):
            x = torch.randn(16, 32)
            y = torch.randint(0, 4, (16,))
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            run.step()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One recorded run (schedule, tables, cProfile, analysis through the binary)."""
    out = tmp_path_factory.mktemp("capture")
    stream = io.StringIO()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("KINETOSCOPE_BIN", kinetoscope_bin())  # what analyze=True runs
        with capture.profile_run(
            out, cprofile=True, stream=stream, analyze=True, row_limit=15, **SCHEDULE
        ) as run:
            train(run)
    return run, stream.getvalue()


def traces_of(run):
    return sorted(
        p for p in run.dir.iterdir() if ".pt.trace.json" in p.name or p.name.endswith("_trace.json")
    )


def profiler_steps(path):
    events = json.loads(path.read_text())["traceEvents"]
    return sorted(
        int(e["name"].split("#")[1])
        for e in events
        if e.get("name", "").startswith("ProfilerStep#")
    )


def test_the_run_folder_holds_exactly_the_expected_files(recorded):
    run, _ = recorded
    assert run.dir.parent.name.startswith("capture")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}_\d{6}", run.dir.name)
    names = sorted(str(p.relative_to(run.dir)) for p in run.dir.rglob("*") if p.is_file())
    stamps = sorted({m for n in names for m in re.findall(r"\.(\d{13})\.", n)})
    assert len(stamps) == 2, names  # one per cycle, shared by its trace and timeline
    expected = [
        "stage1-model_init.pstats",
        "stage1-model_init_memory_timeline.json",
        "stage1-model_init_trace.json",
        "stage2-train.pstats",
    ]
    for stamp in stamps:
        expected += [
            f"stage2-train.{stamp}.memory_timeline.json",
            f"stage2-train.{stamp}.pt.trace.json",
        ]
    expected += [
        f"tables/{folder}/prof_0_local_0_{key}.txt"
        for folder in ("stage1-model_init", "stage2-train.cycle1", "stage2-train.cycle2")
        for key in CPU_TABLES
    ]
    assert names == sorted(expected)
    assert sorted(run.files) == sorted(p for p in run.dir.rglob("*") if p.is_file())


def test_the_printed_plan_is_the_steps_recorded(recorded):
    run, out = recorded
    plan = [line for line in out.splitlines() if line.startswith("[PROFILER:train] stage 2:")]
    assert len(plan) == 1, out
    cycles = re.findall(r"steps? (\d+)(?:\u2013(\d+))? ACTIVE", plan[0])
    planned = [list(range(int(a), int(b or a) + 1)) for a, b in cycles]
    assert planned == [[3, 4], [7, 8]]
    cycle_traces = [p for p in traces_of(run) if p.name.startswith("stage2-")]
    assert [profiler_steps(p) for p in cycle_traces] == planned
    assert "steps recorded: 3\u20134, 7\u20138" in out
    # the unscheduled phase is recorded whole, as one step
    (init,) = [p for p in traces_of(run) if p.name.startswith("stage1-")]
    assert profiler_steps(init) == [0]


def test_progress_lines_are_plain_off_a_terminal(recorded):
    _, out = recorded
    lines = out.splitlines()
    assert "\x1b" not in out
    assert all(line.startswith("[PROFILER:") for line in lines), lines
    assert any("CPU only: no CUDA memory snapshots" in line for line in lines)
    assert lines[-1].startswith("[PROFILER:run] analysing: ")


def summary_json(folder):
    """`kinetoscope summary FOLDER --format json`, which must succeed, as a dict."""
    done = subprocess.run(
        [kinetoscope_bin(), "summary", str(folder), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_kinetoscope_summary_reads_every_phase(recorded):
    run, _ = recorded
    doc = summary_json(run.dir)
    assert doc["layout"] == "run_folder"
    assert [(p["stage"], p["phase"]) for p in doc["phases"]] == [(1, "model_init"), (2, "train")]
    kinds = {p["phase"]: sorted({a["kind"] for a in p["artifacts"]}) for p in doc["phases"]}
    assert kinds == {
        "model_init": ["memory_timeline", "pstats", "trace"],
        "train": ["memory_timeline", "pstats", "trace"],
    }
    assert doc["errors"] == []
    assert len(doc["traces"]) == 3
    steps = sorted(s["number"] for t in doc["traces"] for s in t["steps"])
    assert steps == [0, 3, 4, 7, 8]
    for phase in doc["phase_memory"]:
        for artifact in phase["artifacts"]:
            assert artifact.get("error") is None, artifact
            assert artifact["peak_bytes"] > 0


def test_kinetoscope_report_exits_0_on_the_folder(recorded):
    run, _ = recorded
    assert run.analysis_returncode == 0
    done = subprocess.run(
        [kinetoscope_bin(), "report", str(run.dir)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "model_init" in done.stdout and "train" in done.stdout
    assert "stage2-train.pstats" in done.stdout


def test_the_tables_parse_with_kinetoscope_tables(recorded):
    run, _ = recorded
    binary = kinetoscope_bin()
    if subprocess.run([binary, "tables", "--help"], capture_output=True, check=False).returncode:
        pytest.fail("this kinetoscope has no `tables` command")
    for folder in sorted((run.dir / "tables").iterdir()):
        done = subprocess.run(
            [binary, "tables", str(folder), "--format", "json"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert doc["errors"] == []
        keys = sorted(t["oumi"]["sort_key"] for t in doc["tables"])
        assert keys == CPU_TABLES
        for t in doc["tables"]:
            assert (t["oumi"]["rank"], t["oumi"]["local_rank"]) == (0, 0)
            assert 0 < len(t["table"]["rows"]) <= 15


def test_the_cprofile_files_load_in_pstats(recorded):
    run, _ = recorded
    stats = pstats.Stats(str(run.dir / "stage2-train.pstats"))
    assert stats.total_calls > 0
    assert any("backward" in func[2] for func in stats.stats)


def test_the_schedule_arithmetic_is_torchs():
    from torch.profiler import schedule as torch_schedule

    combos = itertools.product(range(3), range(3), range(1, 4), range(4), range(3), (0, 1))
    checked = 0
    for wait, warmup, active, repeat, skip_first, skip_first_wait in combos:
        ours = Schedule(wait, warmup, active, repeat, skip_first, skip_first_wait)
        with _quiet_warmup_warning():
            theirs = torch_schedule(
                wait=wait,
                warmup=warmup,
                active=active,
                repeat=repeat,
                skip_first=skip_first,
                skip_first_wait=skip_first_wait,
            )
        actions = [ours.action(k) for k in range(40)]
        assert actions == [theirs(k).name for k in range(40)], ours
        # the cycles the plan prints are the runs of recording actions
        recorded_runs = [
            [k for k in g]
            for rec, g in itertools.groupby(
                range(40), key=lambda k, a=actions: a[k] in ("RECORD", "RECORD_AND_SAVE")
            )
            if rec
        ]
        flat = [k for run in recorded_runs for k in run]
        cycles = [list(range(f, last + 1)) for _, f, last in ours.cycles(40)]
        assert [k for c in cycles for k in c if k < 40] == flat, ours
        assert ours.recorded_steps(40) == flat
        checked += 1
    assert checked == 648


def test_plan_lines_word_the_tensorboard_example():
    # The TensorBoard guide: wait=1, warmup=1, active=3, repeat=1.
    lines = Schedule(wait=1, warmup=1, active=3, repeat=1).plan_lines()
    assert lines[1] == "cycle 1: steps 2\u20134 ACTIVE (warm-up step 1)"
    forever = Schedule(wait=0, warmup=2, active=1, repeat=0, skip_first=3).plan_lines()
    assert forever[1:] == [
        "cycle 1: step 5 ACTIVE (warm-up steps 3\u20134)",
        "then every 3 steps while the phase runs (repeat=0)",
    ]
    cut = Schedule(wait=0, warmup=1, active=4, repeat=1).plan_lines(steps=3)
    assert cut[1].endswith("(cut at step 2: the phase has 3 steps)")
    with pytest.raises(ValueError):
        Schedule(active=0)


def test_colour_on_a_terminal_unless_no_color(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = Tty()
    Progress(tty).say("train", "hello\x1b[2J")
    assert tty.getvalue() == f"{CYAN}[PROFILER:train]\x1b[0m hello\\x1b[2J\n"
    monkeypatch.setenv("NO_COLOR", "1")
    tty = Tty()
    Progress(tty).say("train", "hello")
    assert tty.getvalue() == "[PROFILER:train] hello\n"


def test_phase_names_that_would_break_the_layout_are_refused():
    for bad in ["", "a.b", "a/b", "-x", "x" * 65, "tab\t"]:
        with pytest.raises(ValueError):
            check_phase_name(bad)
    assert check_phase_name("training_micro-steps") == "training_micro-steps"
    names = PhaseNames(3, "eval", 2)
    assert names.trace() == "stage3-eval.rank2.pt.trace.json"
    assert names.snapshot(oom=True) == "stage3-eval.rank2.oom.pickle"


def test_other_ranks_record_nothing_by_default_and_all_ranks_on_request(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    quiet = io.StringIO()
    with capture.profile_run(tmp_path / "r0", run_name="same", stream=quiet) as run:
        train(run, steps=1)
    assert not (tmp_path / "r0").exists() and quiet.getvalue() == ""
    out = io.StringIO()
    with capture.profile_run(
        tmp_path / "all",
        ranks="all",
        run_name="same",
        stream=out,
        active=1,
        warmup=0,
        memory_timeline=False,
        sort_keys=["self_cpu_time_total"],
    ) as run:
        train(run, steps=2)
    names = sorted(str(p.relative_to(run.dir)) for p in run.dir.rglob("*") if p.is_file())
    assert names[0] == "stage1-model_init.rank1.pt.trace.json"
    assert re.fullmatch(r"stage2-train\.rank1\.\d{13}\.pt\.trace\.json", names[1]), names
    assert names[2:] == [
        "tables/stage1-model_init/prof_1_local_1_self_cpu_time_total.txt",
        "tables/stage2-train.cycle1/prof_1_local_1_self_cpu_time_total.txt",
    ]
    doc = summary_json(run.dir)
    assert [p["phase"] for p in doc["phases"]] == ["model_init", "train"]
    assert [t["rank"] for t in doc["traces"]] == [1, 1]
    assert "kinetoscope report" in out.getvalue().splitlines()[-1]


def test_importing_capture_does_not_import_torch():
    code = "import sys; import kinetoscope.capture; print('torch' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "False"


def test_cuda_helpers_fall_back_on_older_torch_and_attach_one_oom_observer(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from kinetoscope import _capture_cuda as cuda

    calls, attached = [], []

    def old_record(enabled=None, trace_alloc_max_entries=1, trace_alloc_record_context=False):
        calls.append((enabled, trace_alloc_max_entries))

    fake = SimpleNamespace(
        cuda=SimpleNamespace(memory=SimpleNamespace(_record_memory_history=old_record)),
        _C=SimpleNamespace(_cuda_attach_out_of_memory_observer=attached.append),
    )
    monkeypatch.setattr(cuda, "_OOM_DUMPER", None)
    assert cuda.start_history(fake, 123) is None
    assert calls == [(True, 123)]
    monkeypatch.setattr(cuda, "_OOM_ATTACHED", False)
    seen = []
    assert cuda.set_oom_dumper(fake, lambda *a: seen.append(("first",) + a)) is None
    assert cuda.set_oom_dumper(fake, lambda *a: seen.append(("second",) + a)) is None
    assert len(attached) == 1  # torch cannot detach: one observer per process
    attached[0](0, 10, 80, 5)
    cuda.set_oom_dumper(fake, None)
    attached[0](0, 10, 80, 5)
    assert seen == [("second", 0, 10, 80, 5)]
    no_observer = SimpleNamespace(_C=SimpleNamespace())
    monkeypatch.setattr(cuda, "_OOM_ATTACHED", False)
    assert "no torch._C._cuda_attach" in cuda.set_oom_dumper(no_observer, print)


def test_a_run_name_used_twice_is_refused_and_nothing_is_overwritten(tmp_path):
    folder = tmp_path / "same"
    folder.mkdir()
    (folder / "stage1-model_init_trace.json").write_text("{}")
    with pytest.raises(FileExistsError, match="give another run_name"):
        with capture.profile_run(tmp_path, run_name="same", stream=io.StringIO()):
            pass
    assert (folder / "stage1-model_init_trace.json").read_text() == "{}"


def test_without_kinetoscope_the_analysis_prints_the_command(tmp_path, monkeypatch):
    from kinetoscope import _capture_output as output

    monkeypatch.delenv("KINETOSCOPE_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(output.importlib.util, "find_spec", lambda name: None)
    assert output.kinetoscope_command() is None
    stream = io.StringIO()
    assert output.analyze(tmp_path / "run 1", Progress(stream)) is None
    assert stream.getvalue() == (
        f"[PROFILER:run] kinetoscope not found (PATH, KINETOSCOPE_BIN); "
        f"run: kinetoscope report '{tmp_path}/run 1'\n"
    )


def test_a_phase_without_allocations_leaves_no_empty_timeline(tmp_path):
    stream = io.StringIO()
    with capture.profile_run(tmp_path, stream=stream, tables=False) as run:
        with run.phase("idle"):
            pass
    assert [p.name for p in run.dir.iterdir()] == ["stage1-idle_trace.json"]
    assert run.files == [run.dir / "stage1-idle_trace.json"]
    assert "no memory timeline: torch recorded no allocation on cpu" in stream.getvalue()
