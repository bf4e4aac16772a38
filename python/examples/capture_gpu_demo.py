#!/usr/bin/env python3
"""A small CUDA training run recorded with `kinetoscope.capture` (about 10 s on a GPU).

    python3 python/examples/capture_gpu_demo.py OUT_DIR [--oom] [--steps N]

Two phases, `model_init` (recorded whole) and `train` (a schedule: warm-up step 1,
steps 2-4 recorded), with CUDA memory snapshots, memory timelines, key_averages tables
(CPU and CUDA sort keys) and cProfile files, written to a new timestamped folder under
OUT_DIR; the last line names the command that analyses it. `--oom` adds a third phase
that asks for more memory than the GPU has, catches the error and leaves the snapshot
dumped by torch's out-of-memory observer (`stage3-oom.oom.pickle`).
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402

from kinetoscope.capture import profile_run  # noqa: E402


class Block(torch.nn.Module):
    """A residual MLP block."""

    def __init__(self, d):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--oom", action="store_true", help="add a phase that runs out of memory")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: this demo records a GPU run", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    device = "cuda"
    with profile_run(
        args.out_dir,
        wait=0,
        warmup=1,
        active=3,
        repeat=1,
        skip_first=1,
        cprofile=True,
        with_modules=True,
        max_entries=50_000,
    ) as run:
        with run.phase("model_init", scheduled=False):
            model = torch.nn.Sequential(*[Block(512) for _ in range(4)], torch.nn.Linear(512, 10))
            model = model.to(device)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
        with run.phase("train"):
            for _ in range(args.steps):
                x = torch.randn(256, 512, device=device)
                y = torch.randint(0, 10, (256,), device=device)
                with torch.autocast(device, dtype=torch.bfloat16):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                run.step()
            torch.cuda.synchronize()
        if args.oom:
            with run.phase("oom", scheduled=False):
                free, _total = torch.cuda.mem_get_info()
                try:
                    torch.empty(int(free) * 4, dtype=torch.uint8, device=device)
                except torch.cuda.OutOfMemoryError:
                    print("out of memory, as asked", file=sys.stderr)
    print(f"recorded in {time.monotonic() - t0:.1f} s into {run.dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
