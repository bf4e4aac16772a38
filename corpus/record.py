#!/usr/bin/env python3
"""Record small PyTorch profiler traces with known, planted problems.

Each scenario runs a real (tiny) training loop under ``torch.profiler`` and writes one
gzipped Kineto trace per rank into ``corpus/traces/<scenario>/``. The advisor's corpus
tests (``crates/kinetoscope-advisor/tests/it/corpus.rs``) check that the planted problem is
found and ranked first or second, and that the clean run raises no warning.

Usage::

    python corpus/record.py                 # every scenario, on CPU
    python corpus/record.py --device cuda   # on a GPU, when one is available
    python corpus/record.py dataloader leak # some scenarios
    python corpus/record.py --out /tmp/x    # somewhere else than corpus/traces/
    python corpus/record.py pairs           # the base/new pairs of corpus/pairs/ (diff)

See corpus/README.md.
"""

import argparse
import gzip
import os
import shutil
import sys
import tempfile
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "traces")
PAIRS = os.path.join(HERE, "pairs")  # base/new pairs for `kinetoscope diff`

STEPS = 6  # active (recorded) steps
SCHEDULE = dict(wait=1, warmup=1, active=STEPS, repeat=1)


def make_model(device, layers=4, width=256):
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    mods.append(nn.Linear(width, 10))
    return nn.Sequential(*mods).to(device)


def activities(device):
    acts = [ProfilerActivity.CPU]
    if device.startswith("cuda"):
        acts.append(ProfilerActivity.CUDA)
    return acts


ATTEMPTS = 5  # recordings per scenario; the one with the steadiest steps is kept
QUIET_CV = 0.05  # stop retrying once the step-time coefficient of variation is below this


def save(prof, scenario, name, cv, root=None):
    """Keep this recording if its steps are steadier than the one already kept.

    On a shared machine other processes make some steps slow; the planted problems are
    not about step-time variation, so the steadiest of a few attempts is kept.
    """
    folder = os.path.join(root or OUT, scenario)
    os.makedirs(folder, exist_ok=True)
    dst = os.path.join(folder, name + ".json.gz")
    best = BEST_CV.get(dst)
    if best is not None and best <= cv:
        print(f"  attempt with step CV {cv:.3f} not kept (best {best:.3f})")
        return
    BEST_CV[dst] = cv
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(raw)
        with open(raw, "rb") as src, gzip.open(dst, "wb", compresslevel=9) as out:
            shutil.copyfileobj(src, out)
    print(f"wrote {dst} ({os.path.getsize(dst) // 1024} KiB, step CV {cv:.3f})")


BEST_CV = {}


def step_cv(times):
    mean = sum(times) / len(times)
    var = sum((t - mean) ** 2 for t in times) / len(times)
    return (var ** 0.5) / mean if mean > 0 else 0.0


def train_loop(scenario, device, *, loader=None, leak=False, item_sync=False,
               foreach=True, with_stack=False, extra_delay_s=0.0, dist=None,
               fused=None, profile_memory=True, name="trace", layers=4, width=256, batch=512,
               item_sync_once=False, busy_s=0.0, root=None):
    torch.manual_seed(0)
    model = make_model(device, layers, width)
    if fused is None:
        fused = foreach  # the fused implementation unless the scenario plants the for-loop
    if fused:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=foreach)
    loss_fn = nn.CrossEntropyLoss()
    kept = []
    running = []
    total = SCHEDULE["wait"] + SCHEDULE["warmup"] + STEPS
    it = iter(loader) if loader is not None else None
    with profile(
        activities=activities(device),
        schedule=schedule(**SCHEDULE),
        record_shapes=True,
        profile_memory=profile_memory,
        with_stack=with_stack,
    ) as prof:
        times = []
        for step in range(total):
            t0 = time.perf_counter()
            if it is not None:
                x, y = next(it)
                x, y = x.to(device), y.to(device)
            else:
                x = torch.randn(batch, width, device=device)
                y = torch.randint(0, 10, (batch,), device=device)
            out = model(x)
            loss = loss_fn(out, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if dist is not None:
                if extra_delay_s:
                    # The straggler: slow host work before the collective.
                    time.sleep(extra_delay_s)
                for p in model.parameters():
                    dist.all_reduce(p.grad)
            opt.step()
            if leak:
                # Planted leak: keep every step's activations alive, graph included.
                kept.append(out)
                kept.append(model[0](x).repeat(4, 1))  # 2 MiB per step
            if item_sync:
                # Planted sync: per-sample Python metrics pull scalars to the host.
                correct = 0
                for i in range(32):
                    correct += int(out[i].argmax().item() == y[i].item())
                running.append(loss.item())
            if item_sync_once:
                # The fix: the same metric computed on the device, read once per step.
                correct = (out[:32].argmax(dim=1) == y[:32]).sum()
                running.append(torch.stack([loss.detach(), correct.float()]).tolist())
            if busy_s:
                # Planted slowdown: extra host work inside the step.
                t1 = time.perf_counter()
                while time.perf_counter() - t1 < busy_s:
                    pass
            times.append(time.perf_counter() - t0)  # prof.step() itself excluded
            prof.step()
    cv = step_cv(times[-STEPS:])
    LAST_MEDIAN_STEP[0] = sorted(times[-STEPS:])[STEPS // 2]
    save(prof, scenario, name, cv, root)
    return cv


class SlowDataset(torch.utils.data.Dataset):
    """A dataset whose __getitem__ does slow Python work (decoding, augmentation)."""

    def __init__(self, width, n=100_000, delay_s=0.0001):
        self.width, self.n, self.delay_s = width, n, delay_s
        self.items = [torch.randn(width) for _ in range(64)]

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < self.delay_s:
            pass
        return self.items[i % 64], i % 10


def scenario_clean(device):
    return train_loop("clean", device)


def scenario_dataloader(device):
    ds = SlowDataset(256)
    loader = torch.utils.data.DataLoader(ds, batch_size=256, num_workers=0)
    return train_loop("dataloader", device, loader=loader, batch=256, profile_memory=False)


def scenario_leak(device):
    return train_loop("leak", device, leak=True)


def scenario_item_sync(device):
    return train_loop("item_sync", device, item_sync=True, with_stack=True, profile_memory=False)


def scenario_unfused_optimizer(device):
    # Many small parameter tensors and the for-loop AdamW: the optimizer step is made of
    # per-parameter element-wise ops.
    return train_loop("unfused_optimizer", device, foreach=False, layers=12, width=32, batch=64,
               profile_memory=False)


def _straggler_worker(rank, world, device, port):
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.set_num_threads(1)
    return train_loop("straggler", device, dist=dist, extra_delay_s=0.03 if rank == 1 else 0.0,
               name=f"rank{rank}", profile_memory=False)
    dist.destroy_process_group()


def scenario_straggler(device):
    import torch.multiprocessing as mp

    mp.spawn(_straggler_worker, args=(2, "cpu", 29517), nprocs=2, join=True)


class TinyGPT(nn.Module):
    """A small causal transformer language model (the shape of nanochat's GPT, tiny)."""

    def __init__(self, vocab=512, width=128, heads=4, layers=2, seq=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Embedding(seq, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq))

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        x = self.blocks(x, mask=self.mask, is_causal=True)
        logits = self.head(self.norm(x))
        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())


def scenario_run_folder(device):
    """A run folder as nanochat's phase profiler (`ProfilingManager`, karpathy/nanochat
    pull request 105) writes it: one profiler per phase (nanochat's stage names),
    started before the phase and stepped once at its end (schedule wait=0, warmup=0,
    active=1), `record_shapes`, `profile_memory`, `with_stack`;
    `stage<N>-<phase>_trace.json` in a timestamped sub-folder. Left out: nanochat's
    `_mem.pickle` (CUDA snapshots: no GPU here) and `_memory_timeline.html` (a picture
    kinetoscope lists but does not read); the traces are gzipped to keep the corpus
    small. The data are random tokens, without a DataLoader."""
    import datetime as dt

    torch.manual_seed(0)
    run = os.path.join(OUT, "run_folder", dt.datetime.now().strftime("%Y%m%d_%H%M%S"))
    os.makedirs(run, exist_ok=True)
    state = {}
    micro, batch, seq, vocab = 4, 8, 64, 512

    def tokens():
        return torch.randint(0, vocab, (batch, seq), device=device)

    def phase(stage, name, body):
        base = os.path.join(run, f"stage{stage}-{name}")

        def on_ready(p):
            p.export_chrome_trace(base + "_trace.json")

        prof = profile(
            activities=activities(device),
            schedule=schedule(wait=0, warmup=0, active=1, repeat=1),
            record_shapes=True,
            profile_memory=True,
            with_stack=True,
            on_trace_ready=on_ready,
        )
        prof.start()
        body()
        prof.step()  # the schedule's one active step ends: the trace is exported
        prof.stop()
        with open(base + "_trace.json", "rb") as src, \
                gzip.open(base + "_trace.json.gz", "wb", compresslevel=9) as out:
            shutil.copyfileobj(src, out)
        os.remove(base + "_trace.json")
        print(f"wrote {base}_trace.json.gz")

    def model_init():
        state["model"] = TinyGPT(vocab=vocab, seq=seq).to(device)
        state["opt"] = torch.optim.AdamW(state["model"].parameters(), lr=3e-4)

    def eval_bpb():
        model = state["model"]
        model.eval()
        with torch.no_grad():
            for _ in range(2):
                model(tokens(), tokens())
        model.train()

    def training_microsteps():
        for _ in range(micro):
            loss = state["model"](tokens(), tokens()) / micro
            loss.backward()

    def optimizer_step():
        torch.nn.utils.clip_grad_norm_(state["model"].parameters(), 1.0)
        state["opt"].step()
        state["opt"].zero_grad(set_to_none=True)

    for stage, name, body in [
        (1, "model_init", model_init),
        (2, "eval_bpb", eval_bpb),
        (3, "training_microsteps", training_microsteps),
        (4, "optimizer_step", optimizer_step),
    ]:
        phase(stage, name, body)


def _pair(name, base, new):
    """Record one base/new pair back to back into corpus/pairs/<name>/."""
    cv_base = base(name, "base")
    cv_new = new(name, "new")
    return max(cv_base, cv_new)


def _loop(**kw):
    return lambda pair, side: train_loop(pair, DEVICE, name=side, root=PAIRS, **kw)


def _dataloader_loop(workers):
    def run(pair, side):
        ds = SlowDataset(256)
        loader = torch.utils.data.DataLoader(ds, batch_size=256, num_workers=workers)
        return train_loop(pair, DEVICE, loader=loader, batch=256, profile_memory=False,
                          name=side, root=PAIRS)
    return run


OPTIMIZER = dict(layers=12, width=32, batch=64, profile_memory=False)
ITEM = dict(with_stack=True, profile_memory=False)


def pair_optimizer(device):
    """unfused (for-loop AdamW) -> fused AdamW, the same model."""
    return _pair("optimizer", _loop(foreach=False, **OPTIMIZER), _loop(fused=True, **OPTIMIZER))


def pair_dataloader(device):
    """DataLoader num_workers 0 -> 2, the same slow dataset."""
    return _pair("dataloader", _dataloader_loop(0), _dataloader_loop(2))


def pair_item_sync(device):
    """.item() per sample -> the metric on the device, read once per step."""
    return _pair("item_sync", _loop(item_sync=True, **ITEM), _loop(item_sync_once=True, **ITEM))


def pair_leak(device):
    """Every step keeps its activations -> nothing kept."""
    return _pair("leak", _loop(leak=True), _loop())


def pair_repeat(device):
    """The same code recorded twice, back to back."""
    return _pair("repeat", _loop(), _loop())


def pair_slowdown(device):
    """The clean loop -> the same loop with host busy work of 20 % of its median step
    (measured on the first base recording, then fixed)."""
    busy = []

    def base(pair, side):
        cv = train_loop(pair, DEVICE, name=side, root=PAIRS)
        if not busy:
            busy.append(0.2 * LAST_MEDIAN_STEP[0])
        return cv

    def new(pair, side):
        return train_loop(pair, DEVICE, name=side, root=PAIRS, busy_s=busy[0])

    return _pair("slowdown", base, new)


def pair_tf32(device):
    """GPU only: FP32 matrix products -> TF32 (`allow_tf32`): the same operators launch
    other cuBLAS kernels, which diff matches through their launching call path."""
    def side(tf32):
        def run(pair, name):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            try:
                return train_loop(pair, DEVICE, name=name, root=PAIRS, width=1024)
            finally:
                torch.backends.cuda.matmul.allow_tf32 = False
        return run

    if not DEVICE.startswith("cuda"):
        print("pair_tf32 needs --device cuda; skipped")
        return 0.0
    return _pair("tf32", side(False), side(True))


SCENARIOS = {
    "clean": scenario_clean,
    "dataloader": scenario_dataloader,
    "leak": scenario_leak,
    "item_sync": scenario_item_sync,
    "unfused_optimizer": scenario_unfused_optimizer,
    "straggler": scenario_straggler,
    "run_folder": scenario_run_folder,
    "pair_optimizer": pair_optimizer,
    "pair_dataloader": pair_dataloader,
    "pair_item_sync": pair_item_sync,
    "pair_leak": pair_leak,
    "pair_repeat": pair_repeat,
    "pair_slowdown": pair_slowdown,
    "pair_tf32": pair_tf32,
}
PAIR_SCENARIOS = [s for s in SCENARIOS if s.startswith("pair_")]
DEVICE = "cpu"
LAST_MEDIAN_STEP = [0.0]


def main():
    global OUT, DEVICE, PAIRS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenarios", nargs="*",
                    default=[s for s in SCENARIOS if s not in PAIR_SCENARIOS],
                    help="scenarios (default: every one but the pairs; `pairs` = every pair)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=OUT, help="output folder (default: corpus/traces)")
    ap.add_argument("--pairs-out", default=PAIRS, help="output folder of the pairs (default: corpus/pairs)")
    args = ap.parse_args()
    OUT = args.out
    PAIRS = args.pairs_out
    DEVICE = args.device
    if args.scenarios == ["pairs"]:
        args.scenarios = PAIR_SCENARIOS
    if args.device == "cpu":
        torch.set_num_threads(1)
    for s in args.scenarios:
        if s not in SCENARIOS:
            sys.exit(f"unknown scenario {s!r}; known: {', '.join(SCENARIOS)}")
        if s.startswith("pair_"):
            shutil.rmtree(os.path.join(PAIRS, s[len("pair_"):]), ignore_errors=True)
        else:
            shutil.rmtree(os.path.join(OUT, s), ignore_errors=True)
        attempts = 1 if s in ("straggler", "run_folder") else ATTEMPTS
        for _ in range(attempts):
            cv = SCENARIOS[s](args.device)
            if cv is not None and cv < QUIET_CV:
                break


if __name__ == "__main__":
    main()
