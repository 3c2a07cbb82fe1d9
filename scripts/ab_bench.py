"""Old against new: the add and GEMM bench rows of two source trees, each with its own AOT bundle, in alternating
blocks on one GPU (the clocks follow power), on identical tensors (same seed, same draws), and the new/old ratio.

    python3 scripts/ab_bench.py OLD_PACKAGES_DIR OLD_BUNDLE NEW_PACKAGES_DIR NEW_BUNDLE [--rounds 4] [--cpu N]

Each block is one process of one tree: `cute_examples.bench --only elementwise` then
`cute_examples.dense_gemm.bench --variant fast`, after `torch.manual_seed(0)`. A row's figure is the median of its
"ours" column over the rounds; rows are matched by their label (the tokens before the first number).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys

_PKGS = ("cute-layout", "cute-nvarch", "cute-runtime", "cute-examples")
_RUN = (
    "import runpy, sys, torch; torch.manual_seed(0); torch.cuda.manual_seed_all(0); "
    "sys.argv = [sys.argv[1], *sys.argv[2:]]; runpy.run_module(sys.argv[0], run_name='__main__')"
)
_NUM = re.compile(r"^-?\d+\.\d+x?$")


def _rows(packages: str, bundle: str, cpu: int | None, module: str, *args: str) -> dict[str, float]:
    """{row label: ours figure} from one bench process of the tree under `packages` (pinned to `cpu` if given)."""
    env = dict(os.environ, CUTE_BUNDLE_DIR=bundle, PYTHONPATH=":".join(f"{packages}/{p}/src" for p in _PKGS))
    pin = None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))
    out = subprocess.run(
        [sys.executable, "-c", _RUN, module, *args], env=env, capture_output=True, text=True, preexec_fn=pin
    )
    if out.returncode != 0:
        raise SystemExit(f"{packages}: {module} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    rows = {}
    for line in out.stdout.splitlines():
        tokens = line.split()
        first = next((i for i, t in enumerate(tokens) if _NUM.match(t)), None)
        if first and tokens[0] in ("float32", "float16", "bfloat16"):
            rows[" ".join(tokens[:first])] = float(tokens[first])
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("old_packages")
    p.add_argument("old_bundle")
    p.add_argument("new_packages")
    p.add_argument("new_bundle")
    p.add_argument("--rounds", type=int, default=4, help="an even count puts each side first equally often")
    p.add_argument("--cpu", type=int, default=None, help="pin every bench process to this CPU (steadier host timing)")
    args = p.parse_args()
    sides = {"old": (args.old_packages, args.old_bundle), "new": (args.new_packages, args.new_bundle)}
    got: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    for r in range(args.rounds):
        for side in (("old", "new") if r % 2 == 0 else ("new", "old")):
            packages, bundle = sides[side]
            rows = _rows(packages, bundle, args.cpu, "cute_examples.bench", "--only", "elementwise")
            rows.update(_rows(packages, bundle, args.cpu, "cute_examples.dense_gemm.bench", "--variant", "fast"))
            for label, value in rows.items():
                got[side].setdefault(label, []).append(value)
            print(f"round {r} {side}: {len(rows)} rows", flush=True)
    print(f"\n{'row':34} {'old':>9} {'new':>9} {'new/old':>8}   (GB/s for the add, TFLOP/s for the GEMM; medians)")
    worst = None
    for label, olds in got["old"].items():
        news = got["new"].get(label)
        if not news:
            print(f"{label:34} {statistics.median(olds):9.1f} {'missing':>9}")
            continue
        o, n = statistics.median(olds), statistics.median(news)
        worst = n / o if worst is None else min(worst, n / o)
        rounds = "  old " + " ".join(f"{x:.0f}" for x in olds) + " | new " + " ".join(f"{x:.0f}" for x in news)
        print(f"{label:34} {o:9.1f} {n:9.1f} {n / o:8.3f}{rounds}")
    print(f"lowest new/old: {worst:.3f}" if worst is not None else "no rows matched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
