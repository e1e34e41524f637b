#!/usr/bin/env python3
"""Prints docs/heterogeneous.md's table from a `gpuplace-train --compare` run on the heterogeneous
preset: every policy of compare.json (every heuristic under every queue policy, the type-aware ones
included, and PPO: the kept network and each training seed's), mean and p95 JCT, makespan and the
utilisation of each GPU type, then PPO's median over training seeds with its spread and the paired
difference of the median seed against the best heuristic.

Usage: python3 experiments/heterogeneous_table.py OUT/compare.json [--types v100,p100,k80]
"""
import argparse
import json
import math
import statistics


def mean_sem(v):
    m = sum(v) / len(v)
    if len(v) < 2:
        return m, 0.0
    return m, math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1) / len(v))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("compare_json")
    ap.add_argument("--types", default="v100,p100,k80", help="the cluster's GPU types, in topology order")
    a = ap.parse_args()
    types = a.types.split(",")
    with open(a.compare_json) as f:
        rep = json.load(f)
    pol = rep["policies"]
    h = 1 / 3600

    def col(name, key):
        return [s[key] for s in pol[name]["per_seed"]]

    rows = []
    for name in pol:
        jct = mean_sem(col(name, "avg_jct"))
        p95 = mean_sem(col(name, "p95_jct"))
        mk = mean_sem(col(name, "makespan"))
        util = [statistics.fmean(s["type_utilization"][t] for s in pol[name]["per_seed"]) for t in range(len(types))]
        rows.append((jct[0], name, jct, p95, mk, util, statistics.fmean(col(name, "utilization"))))
    rows.sort()
    n = len(rep["seeds"])
    print(f"| policy | mean JCT (h) | p95 JCT (h) | makespan (h) | " + " | ".join(f"util {t}" for t in types) + " | util all |")
    print("|---|---|---|---|" + "---|" * len(types) + "---|")
    for _, name, jct, p95, mk, util, u in rows:
        print(f"| {name} | {jct[0] * h:.3f} ± {jct[1] * h:.3f} | {p95[0] * h:.2f} ± {p95[1] * h:.2f} | {mk[0] * h:.2f} ± {mk[1] * h:.2f} | "
              + " | ".join(f"{x:.3f}" for x in util) + f" | {u:.3f} |")
    print(f"\n(mean ± standard error over {n} held-out seeds; utilisation: busy GPU-time of the type over its GPUs x makespan)\n")
    heur = [r for r in rows if not r[1].startswith("ppo")]
    best = heur[0][1]
    seeds = [r for r in rows if r[1].startswith("ppo") and "[seed" in r[1]]
    if not seeds:
        return
    by_jct = sorted(seeds)
    med = by_jct[len(by_jct) // 2]
    d = [x - y for x, y in zip(col(med[1], "avg_jct"), col(best, "avg_jct"))]
    dm, ds = mean_sem(d)
    lower = sum(1 for x in d if x < 0)
    print(f"PPO over {len(seeds)} training seeds: median mean JCT {med[0] * h:.3f} h ({med[1]}), "
          f"spread {by_jct[0][0] * h:.3f} - {by_jct[-1][0] * h:.3f} h; best heuristic {best} {heur[0][0] * h:.3f} h")
    print(f"median seed minus {best}, paired over the {n} seeds: {dm * h:+.3f} ± {ds * h:.3f} h (lower on {lower} of {n} seeds)")


if __name__ == "__main__":
    main()
