#!/usr/bin/env python3
"""Record real GPU profiler artifacts (Kineto traces, CUDA memory snapshots, memory
timelines) for ``corpus/gpu-h200/``.

Every scenario runs a small real workload on the GPU and writes its files under
``OUT/<scenario>/``; nothing is edited afterwards. What each scenario records and with
which parameters goes into ``OUT/manifest.json`` (with the torch / CUDA versions and the
GPU), and a log of the run into ``OUT/log.txt``. Each scenario is run in its own
``try``: one failure is logged with its traceback and the others go on.

Usage::

    python3 corpus/record_gpu.py corpus/gpu-h200                 # every scenario
    python3 corpus/record_gpu.py /tmp/rec cuda_graph oom         # some scenarios
    python3 corpus/record_gpu.py /tmp/rec --archive-dir /tmp/ship # + tar.gz bundles
    python3 corpus/record_gpu.py /tmp/smoke --device cpu          # CPU smoke run

``--archive-dir`` packs the output into a few ``.tar.gz`` bundles (rewritten after each
scenario, so a run cut short still leaves what it had finished), for machines that
return only a few files. ``--device cpu`` runs the scenarios that can run without a GPU
(no snapshots, graphs or OOM) to check the script itself; its output is not a fixture.

Scenarios: see ``SCENARIOS`` below and ``corpus/gpu-h200/README.md``.
"""

import argparse
import datetime as dt
import gzip
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import (
    ProfilerActivity,
    profile,
    schedule,
    tensorboard_trace_handler,
)

HERE = os.path.dirname(os.path.abspath(__file__))

# Which bundle each scenario's folder goes into with --archive-dir (few files come back
# from some machines: keep the number of bundles small).
BUNDLES = {
    "corpus": "bundle-a",
    "transformer": "bundle-a",
    "cuda_graph": "bundle-a",
    "oom": "bundle-a",
    "compile_default": "bundle-b",
    "compile_reduce_overhead": "bundle-b",
    "run_folder": "bundle-b",
    "ddp_nccl": "bundle-b",
}

LOG = None  # the log file, opened in main()
T0 = time.monotonic()


def log(*args):
    line = " ".join(str(a) for a in args)
    stamp = f"[{time.monotonic() - T0:7.1f}s] "
    print(stamp + line, flush=True)
    if LOG is not None:
        LOG.write(stamp + line + "\n")
        LOG.flush()


def is_cuda(device):
    return device.startswith("cuda")


def activities(device):
    acts = [ProfilerActivity.CPU]
    if is_cuda(device):
        acts.append(ProfilerActivity.CUDA)
    return acts


def sync(device):
    if is_cuda(device):
        torch.cuda.synchronize()


def gzip_file(src, dst):
    with open(src, "rb") as f, gzip.open(dst, "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)


# ---------------------------------------------------------------------------------
# Facts about what was written, for the manifest and the log (read back from the files,
# so they describe the files, not the intentions).


def load_json(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def trace_facts(path):
    """Counts read back from a Kineto trace file."""
    doc = load_json(path)
    events = doc.get("traceEvents", [])
    cats = {}
    kernels = graph_kernels = graph_launches = steps = oom = 0
    kernel_names = {}
    for e in events:
        cat = e.get("cat")
        if cat is not None:
            cats[cat] = cats.get(cat, 0) + 1
        name = e.get("name", "")
        if cat == "kernel":
            kernels += 1
            args = e.get("args", {})
            if "graph id" in args or "graph node id" in args:
                graph_kernels += 1
            kernel_names[name] = kernel_names.get(name, 0) + 1
        elif cat == "cuda_runtime" and name.startswith("cudaGraphLaunch"):
            graph_launches += 1
        elif name.startswith("ProfilerStep#") and e.get("ph") == "X":
            steps += 1
        if name == "[OutOfMemory]":
            oom += 1
    top = sorted(kernel_names.items(), key=lambda kv: -kv[1])[:5]
    return {
        "events": len(events),
        "categories": dict(sorted(cats.items())),
        "kernels": kernels,
        "graph_kernels": graph_kernels,
        "cudaGraphLaunch": graph_launches,
        "profiler_steps": steps,
        "out_of_memory_events": oom,
        "devices": [d.get("name") for d in doc.get("deviceProperties", []) or []],
        "top_kernels": [f"{n[:80]} x{c}" for n, c in top],
    }


def snapshot_facts(path):
    import pickle

    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    snap = pickle.loads(raw)
    segs = snap.get("segments", []) if isinstance(snap, dict) else snap
    traces = snap.get("device_traces", []) if isinstance(snap, dict) else []
    actions = {}
    for dev in traces:
        for t in dev:
            actions[t.get("action")] = actions.get(t.get("action"), 0) + 1
    return {
        "segments": len(segs),
        "reserved_bytes": sum(s.get("total_size", 0) for s in segs),
        "allocated_bytes": sum(s.get("allocated_size", 0) for s in segs),
        "trace_entries": sum(len(d) for d in traces),
        "actions": dict(sorted(actions.items())),
        "top_level_keys": sorted(snap.keys()) if isinstance(snap, dict) else "list",
    }


def file_facts(path):
    name = os.path.basename(path)
    facts = {"bytes": os.path.getsize(path)}
    try:
        if name.endswith((".pickle", ".pickle.gz")):
            facts.update(snapshot_facts(path))
        elif name.endswith(".html"):
            pass
        elif "memory_timeline" in name or name.endswith(".raw.json.gz"):
            doc = load_json(path)
            facts["rows"] = len(doc) if name.endswith(".raw.json.gz") else len(doc[0])
        elif name.endswith((".json", ".json.gz")) and name != "manifest.json":
            facts.update(trace_facts(path))
    except Exception as e:  # facts are a courtesy: never lose a recording over them
        facts["facts_error"] = repr(e)
    return facts


def describe_folder(folder):
    out = {}
    for root, _, files in os.walk(folder):
        for f in sorted(files):
            p = os.path.join(root, f)
            out[os.path.relpath(p, folder)] = file_facts(p)
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------------------
# A small GPT-style model: token + position embeddings, pre-norm blocks, causal
# attention (SDPA, or explicit bmm in the blocks asked for), GELU MLP, tied LM head
# computed with torch.matmul.


class Block(nn.Module):
    def __init__(self, d, heads, manual_attention):
        super().__init__()
        self.heads = heads
        self.manual = manual_attention
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, c = x.shape
        h, hd = self.heads, c // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, h, hd).transpose(1, 2) for z in (q, k, v))
        if self.manual:
            # Attention written out with bmm (as older models do): aten::bmm on the trace.
            qf, kf, vf = (z.reshape(b * h, t, hd) for z in (q, k, v))
            att = torch.bmm(qf, kf.transpose(1, 2)) * (hd ** -0.5)
            mask = torch.ones(t, t, device=x.device, dtype=torch.bool).triu(1)
            att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
            y = torch.bmm(att, vf).view(b, h, t, hd)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyGPT(nn.Module):
    def __init__(self, vocab, d, layers, heads, seq, manual_attention_layers=1):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(
            Block(d, heads, i < manual_attention_layers) for i in range(layers)
        )
        self.ln_f = nn.LayerNorm(d)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return torch.matmul(self.ln_f(x), self.wte.weight.t())  # tied LM head


GPT_CFG = dict(vocab=8192, d=256, layers=4, heads=4, seq=256, manual_attention_layers=1)
GPT_BATCH = 16


def make_gpt(device, cfg=GPT_CFG):
    torch.manual_seed(0)
    return TinyGPT(**cfg).to(device)


def make_adamw(model, device):
    if is_cuda(device):
        return torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True), "fused"
    return torch.optim.AdamW(model.parameters(), lr=3e-4, foreach=True), "foreach"


def gpt_batch(device, cfg=GPT_CFG, batch=GPT_BATCH):
    x = torch.randint(0, cfg["vocab"], (batch, cfg["seq"]), device=device)
    y = torch.randint(0, cfg["vocab"], (batch, cfg["seq"]), device=device)
    return x, y


def gpt_step(model, opt, x, y, device, *, backward=True, step=True):
    with torch.autocast(device_type="cuda" if is_cuda(device) else "cpu", dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), y.view(-1))
    if backward:
        loss.backward()
    if step:
        opt.step()
        opt.zero_grad(set_to_none=True)
    return loss


def small_mlp(device, width=1024, layers=6):
    torch.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.GELU()]
    mods.append(nn.Linear(width, 16))
    return nn.Sequential(*mods).to(device)


# ---------------------------------------------------------------------------------
# Scenarios. Each takes (out_folder, device) and returns its parameters for the
# manifest.


def scenario_corpus(folder, device):
    """corpus/record.py's single-process scenarios, on this device."""
    path = os.path.join(HERE, "record.py")
    if not os.path.exists(path):
        path = os.path.join("corpus", "record.py")
    spec = importlib.util.spec_from_file_location("corpus_record", path)
    rec = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rec)
    rec.OUT = folder
    rec.print = log  # its progress lines into our log too
    # The straggler needs 2 ranks (gloo, CPU processes): not a one-GPU scenario.
    names = [n for n in rec.SCENARIOS if n != "straggler"]
    kept = {}
    for name in names:
        try:
            for _ in range(rec.ATTEMPTS):
                cv = rec.SCENARIOS[name](device)
                if cv is not None and cv < rec.QUIET_CV:
                    break
            kept[name] = rec.BEST_CV.get(os.path.join(folder, name, "trace.json.gz"))
        except Exception:
            log(f"  corpus/{name} FAILED\n" + traceback.format_exc())
            kept[name] = "failed"
    return {
        "script": "corpus/record.py (imported; same parameters as its CPU recordings)",
        "scenarios": names,
        "active_steps": rec.STEPS,
        "schedule": rec.SCHEDULE,
        "attempts_max": rec.ATTEMPTS,
        "kept_step_cv": kept,
        "skipped": {"straggler": "needs 2 ranks; one GPU"},
    }


def scenario_transformer(folder, device):
    """A small GPT trained with bf16 autocast and fused AdamW: a scheduled profile
    written by tensorboard_trace_handler, a memory-timeline run, and a snapshot."""
    model = make_gpt(device)
    opt, opt_kind = make_adamw(model, device)
    sched = dict(wait=1, warmup=1, active=3, repeat=1)
    total = sched["wait"] + sched["warmup"] + sched["active"] + 1
    train_dir = os.path.join(folder, "train")
    os.makedirs(train_dir, exist_ok=True)
    # Warm-up outside the profiler (cuBLAS handles, SDPA backend selection).
    for _ in range(2):
        gpt_step(model, opt, *gpt_batch(device), device)
    sync(device)
    with profile(
        activities=activities(device),
        schedule=schedule(**sched),
        on_trace_ready=tensorboard_trace_handler(train_dir, worker_name="gpu0", use_gzip=True),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
        with_flops=True,
    ) as prof:
        for _ in range(total):
            gpt_step(model, opt, *gpt_batch(device), device)
            prof.step()
    sync(device)

    # One run profiled whole (no schedule) for export_memory_timeline in its 3 forms;
    # its own trace is kept beside them.
    tl_dir = os.path.join(folder, "memory_timeline")
    os.makedirs(tl_dir, exist_ok=True)
    tl_sched = dict(wait=0, warmup=1, active=2, repeat=1)  # a schedule: ProfilerStep# markers
    tl_total = tl_sched["warmup"] + tl_sched["active"] + 1
    with profile(
        activities=activities(device),
        schedule=schedule(**tl_sched),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
    ) as prof:
        for _ in range(tl_total):
            gpt_step(model, opt, *gpt_batch(device), device)
            prof.step()
        sync(device)
    prof.export_chrome_trace(os.path.join(tl_dir, "trace.json.gz"))
    dev = "cuda:0" if is_cuda(device) else "cpu"
    for name in ("memory_timeline.json", "memory_timeline.raw.json.gz", "memory_timeline.html"):
        if name.endswith(".html") and not is_cuda(device):
            continue  # the HTML export reads torch.cuda's peak counters
        try:
            prof.export_memory_timeline(os.path.join(tl_dir, name), device=dev)
        except Exception:
            log(f"  export_memory_timeline({name}) FAILED\n" + traceback.format_exc())

    snap = {}
    if is_cuda(device):
        snap_dir = os.path.join(folder, "snapshot")
        os.makedirs(snap_dir, exist_ok=True)
        snap_steps = 3
        torch.cuda.memory._record_memory_history(max_entries=100000)
        try:
            for _ in range(snap_steps):
                gpt_step(model, opt, *gpt_batch(device), device)
            sync(device)
            torch.cuda.memory._dump_snapshot(os.path.join(snap_dir, "snapshot.pickle"))
        finally:
            torch.cuda.memory._record_memory_history(enabled=None)
        snap = {
            "snapshot_steps": snap_steps,
            "record_memory_history": "max_entries=100000, context/stacks defaults ('all')",
        }
    return {
        "model": dict(GPT_CFG, batch=GPT_BATCH, params=sum(p.numel() for p in model.parameters())),
        "precision": "torch.autocast bf16 (parameters fp32); loss in fp32",
        "attention": "layer 0: explicit torch.bmm; layers 1-3: F.scaled_dot_product_attention(is_causal=True)",
        "lm_head": "torch.matmul with the tied embedding",
        "optimizer": f"AdamW lr=3e-4 ({opt_kind})",
        "warmup_steps_before_profiling": 2,
        "train": {
            "schedule": sched,
            "steps_run": total,
            "profile": "record_shapes, profile_memory, with_stack, with_flops",
            "writer": "tensorboard_trace_handler(worker_name='gpu0', use_gzip=True)",
        },
        "memory_timeline": {
            "schedule": tl_sched,
            "steps_run": tl_total,
            "profile": "record_shapes, profile_memory, with_stack",
            "exports": "export_memory_timeline to .json, .raw.json.gz, .html; device cuda:0",
        },
        **snap,
    }


def scenario_cuda_graph(folder, device):
    """Inference through a captured CUDA graph, replayed under the profiler."""
    if not is_cuda(device):
        raise RuntimeError("needs CUDA")
    model = small_mlp(device).eval()
    batch, width = 64, 1024
    static_in = torch.randn(batch, width, device=device)
    # Warm up on a side stream before capture (as the CUDA graphs docs ask).
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            model(static_in)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(g):
        static_out = model(static_in)
    sync(device)
    replays_per_step = 8
    sched = dict(wait=1, warmup=1, active=3, repeat=1)
    total = sched["wait"] + sched["warmup"] + sched["active"] + 1
    inputs = [torch.randn(batch, width, device=device) for _ in range(replays_per_step)]
    checks = []
    with profile(
        activities=activities(device), schedule=schedule(**sched), record_shapes=True
    ) as prof:
        for _ in range(total):
            for x in inputs:
                static_in.copy_(x)
                g.replay()
            checks.append(static_out.sum())
            prof.step()
        sync(device)
    prof.export_chrome_trace(os.path.join(folder, "trace.json.gz"))
    # The eager reference: one eager forward gives the same output as a replay.
    with torch.no_grad():
        static_in.copy_(inputs[-1])
        g.replay()
        same = torch.allclose(static_out, model(inputs[-1]), atol=1e-4, rtol=1e-4)
    return {
        "model": "MLP 6x Linear(1024,1024)+GELU, Linear(1024,16), fp32, eval, no_grad",
        "batch": batch,
        "capture": "torch.cuda.graph(CUDAGraph()) after 3 warm-up passes on a side stream, before profiling",
        "replays_per_step": replays_per_step,
        "per_replay": "static_input.copy_(x) then g.replay()",
        "schedule": sched,
        "profile": "CPU+CUDA, record_shapes",
        "replay_matches_eager": bool(same),
    }


def _compiled_training(folder, device, mode):
    model = small_mlp(device, width=1024, layers=6)
    opt, opt_kind = make_adamw(model, device)
    cmodel = torch.compile(model, mode=mode)
    batch = 256
    xs = [torch.randn(batch, 1024, device=device) for _ in range(4)]
    ys = [torch.randint(0, 16, (batch,), device=device) for _ in range(4)]
    reduce_overhead = mode == "reduce-overhead"

    def step(i):
        if reduce_overhead:
            torch.compiler.cudagraph_mark_step_begin()
        loss = F.cross_entropy(cmodel(xs[i % 4]), ys[i % 4])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    t = time.monotonic()
    for i in range(3):  # compile (and record the graphs) outside the profiler
        step(i)
    sync(device)
    compile_s = time.monotonic() - t
    sched = dict(wait=1, warmup=1, active=3, repeat=1)
    total = sched["wait"] + sched["warmup"] + sched["active"] + 1
    with profile(
        activities=activities(device), schedule=schedule(**sched), record_shapes=True
    ) as prof:
        for i in range(total):
            step(i)
            prof.step()
        sync(device)
    prof.export_chrome_trace(os.path.join(folder, "trace.json.gz"))
    return {
        "model": "MLP 6x Linear(1024,1024)+GELU, Linear(1024,16), fp32, training",
        "batch": batch,
        "compile": f"torch.compile(model, mode={mode!r}); optimizer not compiled",
        "optimizer": f"AdamW lr=3e-4 ({opt_kind})",
        "steps_before_profiling": 3,
        "compile_and_warmup_s": round(compile_s, 1),
        "schedule": sched,
        "profile": "CPU+CUDA, record_shapes",
        "cudagraph_mark_step_begin": reduce_overhead,
    }


def scenario_compile_default(folder, device):
    return _compiled_training(folder, device, None)


def scenario_compile_reduce_overhead(folder, device):
    if not is_cuda(device):
        raise RuntimeError("needs CUDA (CUDA graphs)")
    return _compiled_training(folder, device, "reduce-overhead")


def scenario_oom(folder, device):
    """Allocate 256 MiB blocks under a small per-process memory cap until the allocator
    raises OutOfMemoryError, with the memory history recording (and the profiler on)."""
    if not is_cuda(device):
        raise RuntimeError("needs CUDA")
    sync(device)
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    already = torch.cuda.memory_reserved()  # pools other scenarios keep (graphs)
    cap = 2 << 30  # 2 GiB on top of that
    fraction = (already + cap) / total
    chunk = 256 << 20
    held, hit = [], None
    torch.cuda.memory._record_memory_history(max_entries=100000)
    torch.cuda.set_per_process_memory_fraction(fraction)
    try:
        with profile(activities=activities(device), profile_memory=True, record_shapes=True) as prof:
            try:
                for _ in range(64):  # 16 GiB at most; the cap stops it long before
                    held.append(torch.empty(chunk, dtype=torch.uint8, device=device))
            except torch.OutOfMemoryError as e:
                hit = str(e).splitlines()[0][:300]
            blocks = len(held)
            sync(device)
        torch.cuda.memory._dump_snapshot(os.path.join(folder, "oom_snapshot.pickle"))
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
        held.clear()
        torch.cuda.set_per_process_memory_fraction(1.0)
        torch.cuda.empty_cache()
    prof.export_chrome_trace(os.path.join(folder, "oom_trace.json.gz"))
    if hit is None:
        raise RuntimeError("no OutOfMemoryError was raised")
    return {
        "cap": f"set_per_process_memory_fraction({fraction:.5f}): {already} bytes reserved "
        f"before + {cap}, of {total}",
        "allocation": f"torch.empty({chunk}, uint8) repeatedly, kept alive",
        "blocks_before_oom": blocks,
        "error_first_line": hit,
        "record_memory_history": "max_entries=100000, defaults otherwise",
        "profile": "CPU+CUDA, profile_memory, record_shapes (the trace holds [OutOfMemory])",
    }


def scenario_run_folder(folder, device):
    """A staged run folder (nanochat-style): one trace, snapshot and memory timeline
    per phase, in a timestamped sub-folder."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d_%H%M%S")
    run = os.path.join(folder, stamp)
    os.makedirs(run, exist_ok=True)
    cfg = dict(GPT_CFG, layers=2)
    micro = 2
    state = {}
    cuda = is_cuda(device)

    def phase(n, name, body):
        base = os.path.join(run, f"stage{n}-{name}")
        if cuda:
            torch.cuda.memory._record_memory_history(max_entries=100000, stacks="python")
        try:
            with profile(
                activities=activities(device),
                record_shapes=True,
                profile_memory=True,
                with_stack=True,
            ) as prof:
                body(prof)
                sync(device)
            if cuda:
                torch.cuda.memory._dump_snapshot(base + "_mem.pickle")
        finally:
            if cuda:
                torch.cuda.memory._record_memory_history(enabled=None)
        prof.export_chrome_trace(base + "_trace.json")
        if cuda:
            try:
                prof.export_memory_timeline(base + "_memory_timeline.html", device="cuda:0")
            except Exception:
                log(f"  {name}: memory timeline FAILED\n" + traceback.format_exc())

    def model_init(prof):
        state["model"] = make_gpt(device, cfg)
        state["opt"], state["opt_kind"] = make_adamw(state["model"], device)

    def training_microsteps(prof):
        for i in range(micro):
            with torch.profiler.record_function(f"microstep_{i}"):
                gpt_step(state["model"], state["opt"], *gpt_batch(device, cfg, 8), device,
                         step=False)

    def optimizer_step(prof):
        torch.nn.utils.clip_grad_norm_(state["model"].parameters(), 1.0)
        state["opt"].step()
        state["opt"].zero_grad(set_to_none=True)

    def evaluation(prof):
        state["model"].eval()
        with torch.no_grad():
            with torch.profiler.record_function("eval_batch_0"):
                gpt_step(state["model"], None, *gpt_batch(device, cfg, 8), device,
                         backward=False, step=False)
        state["model"].train()

    phases = [
        (1, "model_init", model_init),
        (2, "training_microsteps", training_microsteps),
        (3, "optimizer_step", optimizer_step),
        (4, "eval", evaluation),
    ]
    for n, name, body in phases:
        phase(n, name, body)
    return {
        "folder": f"run_folder/{stamp}/ (UTC time of the recording)",
        "model": dict(cfg, batch=8),
        "phases": [f"stage{n}-{name}" for n, name, _ in phases],
        "microsteps": f"{micro} (fwd+bwd, each in record_function('microstep_<i>'))",
        "eval": "1 batch, no_grad, record_function('eval_batch_0')",
        "per_phase": "profile(CPU+CUDA, record_shapes, profile_memory, with_stack) -> _trace.json; "
        "_record_memory_history(max_entries=100000, stacks='python') -> _mem.pickle; "
        "export_memory_timeline -> _memory_timeline.html",
        "optimizer": "AdamW lr=3e-4 (fused on CUDA), grad-norm clip 1.0 in stage3",
    }


def scenario_ddp_nccl(folder, device):
    """The GPT trained under DistributedDataParallel with the NCCL backend, one rank:
    gradient buckets are all-reduced by NCCL kernels on the GPU, as in a real job."""
    if not is_cuda(device):
        raise RuntimeError("needs CUDA")
    import tempfile

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    store = tempfile.NamedTemporaryFile(delete=False).name
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=0, world_size=1)
    try:
        model = DDP(make_gpt(device), device_ids=[torch.cuda.current_device()],
                    bucket_cap_mb=4)
        opt, kind = make_adamw(model, device)
        x, y = gpt_batch(device)
        for _ in range(2):
            gpt_step(model, opt, x, y, device)
        sync(device)
        sched = dict(wait=1, warmup=1, active=3, repeat=1)
        total = sched["wait"] + sched["warmup"] + sched["active"] + 1
        with profile(activities=activities(device), schedule=schedule(**sched),
                     record_shapes=True) as prof:
            for _ in range(total):
                gpt_step(model, opt, x, y, device)
                prof.step()
            sync(device)
        prof.export_chrome_trace(os.path.join(folder, "rank0.trace.json.gz"))
    finally:
        dist.destroy_process_group()
        os.unlink(store)
    return {
        "model": {**GPT_CFG, "batch": GPT_BATCH},
        "parallel": "DistributedDataParallel(bucket_cap_mb=4), NCCL, world_size=1 (file:// store)",
        "precision": "torch.autocast bf16",
        "optimizer": f"AdamW ({kind})",
        "schedule": sched,
        "profile": "CPU+CUDA, record_shapes",
        "allocator": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "default"),
    }


SCENARIOS = {
    "corpus": scenario_corpus,
    "ddp_nccl": scenario_ddp_nccl,
    "transformer": scenario_transformer,
    "cuda_graph": scenario_cuda_graph,
    "compile_default": scenario_compile_default,
    "compile_reduce_overhead": scenario_compile_reduce_overhead,
    "oom": scenario_oom,
    "run_folder": scenario_run_folder,
}


def environment(device):
    env = {
        "recorded_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if is_cuda(device) else None,
        "device": device,
        "recorder": "corpus/record_gpu.py",
    }
    if is_cuda(device):
        p = torch.cuda.get_device_properties(0)
        env.update(
            gpu=torch.cuda.get_device_name(0),
            gpu_memory_bytes=p.total_memory,
            gpu_sms=p.multi_processor_count,
            gpu_capability=f"{p.major}.{p.minor}",
        )
        try:
            smi = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=30,
            )
            env["nvidia_smi"] = smi.stdout.strip()
        except Exception as e:
            env["nvidia_smi"] = repr(e)
    return env


def write_bundles(out, archive_dir, names):
    """Pack OUT's scenario folders into archive_dir/<bundle>.tar.gz (plus manifest)."""
    os.makedirs(archive_dir, exist_ok=True)
    groups = {}
    for n in names:
        if os.path.isdir(os.path.join(out, n)):
            groups.setdefault(BUNDLES.get(n, "bundle-b"), []).append(n)
    for bundle, members in groups.items():
        dst = os.path.join(archive_dir, bundle + ".tar.gz")
        with tarfile.open(dst + ".tmp", "w:gz", compresslevel=6) as tar:
            for n in members:
                tar.add(os.path.join(out, n), arcname=n)
        os.replace(dst + ".tmp", dst)
        log(f"  bundle {dst}: {os.path.getsize(dst) / 2**20:.2f} MiB ({', '.join(members)})")
    shutil.copy(os.path.join(out, "manifest.json"), os.path.join(archive_dir, "manifest.json"))


def main():
    global LOG
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="output folder (corpus/gpu-h200 for the fixtures)")
    ap.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--archive-dir", help="also pack the output into .tar.gz bundles here")
    ap.add_argument("--deadline-s", type=float, default=520.0,
                    help="start no scenario after this many seconds")
    args = ap.parse_args()
    for s in args.scenarios:
        if s not in SCENARIOS:
            sys.exit(f"unknown scenario {s!r}; known: {', '.join(SCENARIOS)}")
    if is_cuda(args.device) and not torch.cuda.is_available():
        sys.exit("CUDA is not available; use --device cpu for a smoke run")
    os.makedirs(args.out, exist_ok=True)
    log_dir = args.archive_dir or args.out
    os.makedirs(log_dir, exist_ok=True)
    LOG = open(os.path.join(log_dir, "log.txt"), "a")
    if args.device == "cpu":
        torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    manifest = {"environment": environment(args.device), "scenarios": {}}
    log("environment", json.dumps(manifest["environment"]))
    for name in args.scenarios:
        if time.monotonic() - T0 > args.deadline_s:
            log(f"{name}: SKIPPED (deadline)")
            manifest["scenarios"][name] = {"status": "skipped: deadline"}
            continue
        folder = os.path.join(args.out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        log(f"{name}: start")
        t = time.monotonic()
        entry = {}
        try:
            entry["params"] = SCENARIOS[name](folder, args.device)
            entry["status"] = "ok"
        except Exception as e:
            entry["status"] = f"failed: {e!r}"
            entry["traceback"] = traceback.format_exc()
            log(f"{name}: FAILED\n{entry['traceback']}")
        finally:
            if is_cuda(args.device):
                try:
                    torch.cuda.memory._record_memory_history(enabled=None)
                    torch.cuda.synchronize()
                    torch.cuda.empty_cache()
                except Exception:
                    log("  cleanup after the scenario failed\n" + traceback.format_exc())
        entry["wall_s"] = round(time.monotonic() - t, 1)
        entry["files"] = describe_folder(folder)
        manifest["scenarios"][name] = entry
        for rel, facts in entry["files"].items():
            short = {k: v for k, v in facts.items() if k in (
                "bytes", "kernels", "graph_kernels", "cudaGraphLaunch", "profiler_steps",
                "segments", "trace_entries", "actions", "rows", "out_of_memory_events",
                "devices", "facts_error")}
            log(f"  {name}/{rel}: {json.dumps(short)}")
            if facts["bytes"] > (4 << 20):
                log(f"  WARNING {name}/{rel} is {facts['bytes'] / 2**20:.1f} MiB: "
                    "record fewer steps before keeping it as a fixture")
        log(f"{name}: {entry['status']} in {entry['wall_s']} s")
        with open(os.path.join(args.out, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=False)
            f.write("\n")
        if args.archive_dir:
            try:
                write_bundles(args.out, args.archive_dir, args.scenarios)
            except Exception:
                log("  bundling FAILED\n" + traceback.format_exc())
    log("done")


if __name__ == "__main__":
    main()
