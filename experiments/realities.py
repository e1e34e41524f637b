#!/usr/bin/env python3
"""The plots of docs/realities.md: goodput and mean JCT against the nodes' MTBF on the `failures`
preset (each placer; a fixed checkpoint interval against Young/Daly's), and the mean JCT of each
tenant under each discipline on the `tenants` preset. Held-out seeds (1000000 + i), mean +- standard
error; the MTBF sweep's table goes into docs/realities.md between `<!-- mtbf:begin -->` and
`<!-- mtbf:end -->`.

    experiments/realities.py [--seeds 20] [--threads 2] [--print] [--only failures,tenants]

Writes docs/realities_mtbf.png and docs/realities_tenants.png (needs matplotlib).
"""
from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import finish, mean_sem  # noqa: E402

DOC = ROOT / "docs" / "realities.md"
MTBF_HOURS = [6, 12, 24, 48, 96, 192, 384]
PLACERS = ["pack+sjf", "load_balance+sjf", "avoid_failed+sjf", "first_fit+sjf"]
TENANT_QUEUES = ["backfill", "capacity", "drf", "themis"]


def sweep(seeds: int, threads: int):
    """Per MTBF: {row: (goodput values, mean JCT values in hours)} for each placer at the preset's
    hourly checkpoints and for pack with Young/Daly's interval."""
    from gpuplace import _core
    from gpuplace.config import load_scenario

    out = {}
    for mtbf in MTBF_HOURS:
        rows = {}
        for interval, label in [(3600, "{p}"), ("young_daly", "pack+sjf, Young/Daly")]:
            sc = load_scenario("failures", {"failures": {"mtbf_hours": mtbf, "checkpoint_interval": interval}})
            names = PLACERS if interval == 3600 else ["pack+sjf"]
            rep = _core.evaluate(sc, names, seeds, threads)
            for n in names:
                ms = rep.per_seed(n)
                rows[label.format(p=n)] = ([m["goodput"] for m in ms], [m["avg_jct"] / 3600 for m in ms])
        out[mtbf] = rows
        print(f"MTBF {mtbf} h: done", file=sys.stderr)
    return out


def plot_sweep(out, path: pathlib.Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for row in out[MTBF_HOURS[0]]:
        g = [mean_sem(out[m][row][0]) for m in MTBF_HOURS]
        j = [mean_sem(out[m][row][1]) for m in MTBF_HOURS]
        style = "--" if "Young" in row else "-"
        a.errorbar(MTBF_HOURS, [x for x, _ in g], yerr=[s for _, s in g], label=row, ls=style, marker="o", ms=3, capsize=2)
        b.errorbar(MTBF_HOURS, [x for x, _ in j], yerr=[s for _, s in j], label=row, ls=style, marker="o", ms=3, capsize=2)
    for ax, what in [(a, "goodput (useful / held GPU-time)"), (b, "mean JCT (h)")]:
        ax.set_xscale("log", base=2)
        ax.set_xticks(MTBF_HOURS, [str(m) for m in MTBF_HOURS])
        ax.set_xlabel("MTBF of a node (h)")
        ax.set_ylabel(what)
        ax.grid(alpha=0.3)
    a.legend(fontsize=8)
    fig.suptitle("failures preset: 64 GPUs, Weibull 0.7 lifetimes, 2 h repairs, hourly checkpoints (60 s)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)


def table(out) -> list[str]:
    rows = list(out[MTBF_HOURS[0]])
    lines = ["| MTBF (h) | " + " | ".join(f"{r}: goodput, mean JCT (h)" for r in rows) + " |",
             "|---|" + "---|" * len(rows)]
    for m in MTBF_HOURS:
        cells = []
        for r in rows:
            g, j = mean_sem(out[m][r][0]), mean_sem(out[m][r][1])
            cells.append(f"{g[0]:.3f} +- {g[1]:.3f}, {j[0]:.2f} +- {j[1]:.2f}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return lines


def plot_tenants(seeds: int, threads: int, path: pathlib.Path) -> None:
    """Per-tenant mean JCT bars, one group per tenant, one bar per discipline."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from gpuplace import _core

    from gpuplace.config import load_scenario

    tenants = list(load_scenario("tenants")["job_fields"][0]["categories"])  # the tenant field's categories, in index order
    rep = _core.evaluate("tenants", [f"pack+{q}" for q in TENANT_QUEUES], seeds, threads)
    per = {}
    for q in TENANT_QUEUES:
        ms = rep.per_seed(f"pack+{q}")  # each a metrics dict; "tenants": per-tenant lists in category order
        per[q] = {t: mean_sem([m["tenants"]["avg_jct"][i] / 3600 for m in ms if m["tenants"]["jobs"][i] > 0])
                  for i, t in enumerate(tenants)}
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(tenants)), 4))
    width = 0.8 / len(TENANT_QUEUES)
    for i, q in enumerate(TENANT_QUEUES):
        xs = [k + i * width for k in range(len(tenants))]
        ax.bar(xs, [per[q].get(t, (0, 0))[0] for t in tenants], width, yerr=[per[q].get(t, (0, 0))[1] for t in tenants],
               label=f"pack+{q}", capsize=2)
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(tenants))], tenants, rotation=30, ha="right")
    ax.set_ylabel("mean JCT (h)")
    ax.set_title(f"tenants preset: mean JCT per tenant ({seeds} held-out seeds)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="failures,tenants", help="failures, tenants or both")
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/realities.md")
    args = ap.parse_args()
    import gpuplace  # noqa: F401  (sets the data folder)

    parts = set(args.only.split(","))
    if "tenants" in parts:
        plot_tenants(args.seeds, args.threads, ROOT / "docs" / "realities_tenants.png")
    if "failures" in parts:
        out = sweep(args.seeds, args.threads)
        plot_sweep(out, ROOT / "docs" / "realities_mtbf.png")
        return finish(table(out), DOC, ROOT, args.print, "mtbf")
    return 0


if __name__ == "__main__":
    sys.exit(main())
