#!/usr/bin/env python3
"""Prints how the shipped Philly network does when it holds jobs by other rules than its greedy action: a lower bar
for DEFER (DEFER's logit raised by a bias; or DEFER wherever its probability is at least a threshold) and holds
sampled (DEFER with a multiple of its probability, the best placement otherwise). Each rule against pack_wait+sjf
(the best heuristic on the validation files) and against the greedy network, paired by seed, each file and the
files together. The network's probability of DEFER is the softmax of `Network.logits(env)` over the valid actions.
About 2 minutes a rule on the validation files with 40 seeds.

    experiments/hold_rules.py [--split validation|held-out] [--seeds 40] [--rules bias:0.5,prob:0.3,sample:1,...]
                              [--model FILE]

The episodes are experiments/idle_waiting.py's (64 DGX-A100 GPUs, 200-job windows, offered load 1.0, DEFER allowed,
sjf); validation seeds 2000000 onwards, held-out ones 1000000 onwards. Rules are chosen on the validation split.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import mean_sem  # noqa: E402
from idle_waiting import PHILLY_FILES, episode, philly_scenario, with_queue  # noqa: E402

from gpuplace import _core, ppo  # noqa: E402
from gpuplace.progress import progress_bar  # noqa: E402

RULES = "bias:0.5,bias:1,bias:1.5,bias:2,bias:3,prob:0.4,prob:0.3,prob:0.2,sample:1,sample:1.5,sample:2"
BASELINE = "pack_wait+sjf"


class HoldRule:
    """The network placing greedily and holding by `kind`: "bias" (DEFER's logit plus x, then the argmax), "prob"
    (DEFER where its probability is at least x) or "sample" (DEFER with probability min(1, x p), drawn from a stream
    seeded by the episode's seed). "greedy" is the network's own action."""

    def __init__(self, net, kind: str, x: float = 0.0):
        if kind not in ("greedy", "bias", "prob", "sample"):
            raise SystemExit(f"--rules: unknown rule {kind!r} (bias:<logits>, prob:<probability>, sample:<multiple>)")
        self.net, self.kind, self.x = net, kind, x
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, env) -> int:
        logits = self.net.logits(env).astype(np.float64)
        hold = env.defer_action
        if self.kind == "greedy" or not np.isfinite(logits[hold]):
            return int(np.argmax(logits))
        if self.kind == "bias":
            logits[hold] += self.x
            return int(np.argmax(logits))
        p = np.exp(logits - logits.max())
        p_hold = p[hold] / p.sum()
        if self.rng.random() < self.x * p_hold if self.kind == "sample" else p_hold >= self.x:
            return hold
        logits[hold] = -np.inf
        return int(np.argmax(logits)) if np.isfinite(logits).any() else hold


def diff(d: list[float]) -> str:
    m, se = mean_sem(d)
    return f"{m:+.3f} ± {se:.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=["validation", "held-out"], default="validation",
                    help="the validation files and seeds (default; where rules are chosen), or the held-out ones")
    ap.add_argument("--seeds", type=int, default=40, help="seeds a file (default 40)")
    ap.add_argument("--rules", default=RULES, help=f"comma-separated kind:x (default {RULES})")
    ap.add_argument("--model", default="philly_distilled", help="the network (a shipped name or a checkpoint file)")
    args = ap.parse_args()
    if args.seeds < 2:
        ap.error(f"--seeds: at least 2 (a standard error needs two), got {args.seeds}")
    net = ppo.load_model(args.model)
    rules = {"greedy": HoldRule(net, "greedy")}
    for r in args.rules.split(","):
        kind, _, x = r.partition(":")
        try:
            rules[r] = HoldRule(net, kind, float(x))
        except ValueError:
            ap.error(f"--rules: {r!r} is not kind:<number>")
    first = 2_000_000 if args.split == "validation" else 1_000_000
    seeds = [first + i for i in range(args.seeds)]
    files = list(PHILLY_FILES[args.split])
    res: dict[str, dict[str, list[float]]] = {}
    with progress_bar(total=len(files) * len(seeds) * (len(rules) + 1), desc="episodes") as bar:
        for f in files:
            res[f] = {}
            for name, act in [(BASELINE, _core.Heuristic("pack_wait"))] + list(rules.items()):
                sc = with_queue(philly_scenario(64, "gpu", f), "sjf") if name == BASELINE else philly_scenario(64, "placement", f)
                res[f][name] = []
                for s in seeds:
                    res[f][name].append(episode(sc, act, s)[0])
                    bar.update(1)
    print(f"`{args.model}` on the {args.split} Philly files, {args.seeds} seeds a file (from {first}); paired differences "
          "in mean JCT (h), mean ± standard error. Generated by `experiments/hold_rules.py`.\n")
    print(f"| rule | {' | '.join(f'{f}: minus {BASELINE} | {f}: minus greedy' for f in files)} | together: minus {BASELINE} "
          "| together: minus greedy |")
    print("|---" * (2 * len(files) + 3) + "|")
    for name in rules:
        cells = []
        for against in (BASELINE, "greedy"):
            per = {f: [a - b for a, b in zip(res[f][name], res[f][against])] for f in files}
            cells.append(([diff(per[f]) for f in files], diff([x for f in files for x in per[f]])))
        row = [c for f in range(len(files)) for c in (cells[0][0][f], cells[1][0][f])] + [cells[0][1], cells[1][1]]
        print(f"| {name} | " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
