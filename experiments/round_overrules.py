#!/usr/bin/env python3
"""Where the round network cloned from the round planner departs from it: the planner
(rollout8h20:pack+class_gittins, causal) acts in the round action mode on validation seeds of the
training files, and at each of its decisions with a choice (two or more valid slots) each training
seed's network (out/models/<run>/seed_<i>, from experiments/round_agent.py --teacher ...) is asked
what it would do in the same state. The decisions are split by whether the planner takes the
advisor's choice (the first valid slot: class_gittins's fill) or overrules it. Writes the table in
docs/rounds.md ("Cloning the round planner").

    experiments/round_overrules.py [--run philly_hidden_round_planner] [--seeds 2] [--workers 2] [--probe] [--print]

The states are the planner's (the ones cloning trains on), not the network's own; the network's
action is its greedy one, computed in torch from its C++ checkpoint (gpuplace.torch_net).

--probe: whether the observation tells the overrules apart given more of them. The planner's
states on 8 more validation seeds a file (from 5,000,002 on); a fresh network of the same
architecture is fit in torch to the planner's actions on the first 6 (cross-entropy, the overrules
weighted 1 or 3 times, 15 epochs) and measured on the last 2 (how many overrules it makes, how many
of its departures from the advisor are the planner's), then its mean JCT against class_gittins's
and the planner's on 10 further seeds a file (from 5,000,100 on), paired. Written to the section
round-overrules-probe.
"""
from __future__ import annotations

import argparse
import multiprocessing
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from doc_section import finish  # noqa: E402

DOC = ROOT / "docs" / "rounds.md"
TRAINING = ["103959", "11cb48", "2869ce", "6214e9", "b436b2", "ed69ec", "ee9e8c"]  # philly_hidden's durations.sample_files
PLANNER = "rollout8h20:pack+class_gittins"
VALIDATION_SEED = 5_000_000
SEEDS = (1, 2, 3)  # the training seeds of experiments/round_agent.py


def scenario(f):
    from gpuplace.config import load_scenario
    from gpuplace.registration import ROUND_OVERRIDES

    over = {**ROUND_OVERRIDES, "env": {**ROUND_OVERRIDES["env"], "round_advisor": "class_gittins"}}
    return load_scenario(f"philly_hidden:{f}", over, action_mode="round")


def planner_states(job):
    """One validation episode of the planner: at each decision with a choice, the observation, mask, the planner's slot and the advisor's."""
    f, seed = job
    import numpy as np

    import gpuplace
    from gpuplace import _core

    vec = gpuplace.make_core_vector_env(scenario(f), 1)
    vec.reset(seed)
    teacher = _core.Teacher(PLANNER, 1, seed=seed)
    obs, masks, acts, adv = [], [], [], []
    while True:
        mask = np.array(vec.action_masks, dtype=bool)
        a = teacher.act(vec)
        valid = np.flatnonzero(mask[0])
        if len(valid) >= 2:
            obs.append(np.array(vec.observations[0], copy=True))
            masks.append(mask[0])
            acts.append(int(a[0]))
            adv.append(int(valid[0]))
        if vec.step(a):
            return np.array(obs, np.float32), np.array(masks), np.array(acts), np.array(adv)


def episode(job):
    """One validation episode of the planner: per decision with a choice, (planner, advisor, each network's) slot."""
    f, seed, run = job
    import torch

    from gpuplace.torch_net import load_checkpoint

    torch.set_num_threads(1)
    nets = [load_checkpoint(str(ROOT / "out" / "models" / run / f"seed_{i}" / "ppo.json"))[0].eval() for i in SEEDS]
    obs, masks, acts, adv = planner_states((f, seed))
    with torch.no_grad():
        chosen = [n.act(obs, masks) for n in nets]
    return [(int(acts[k]), int(adv[k]), *(int(c[k]) for c in chosen)) for k in range(len(acts))]


def mean_jcts(f, seed, n, act):
    """Mean JCT (h) of the first episode of each of n envs (vector env seeded `seed`) under act(vec) -> actions."""
    import numpy as np

    import gpuplace

    vec = gpuplace.make_core_vector_env(scenario(f), n)
    vec.reset(seed)
    out = [None] * n
    while any(x is None for x in out):
        vec.step(np.asarray(act(vec), np.int64))
        for i in np.flatnonzero(np.array(vec.dones)):
            if out[i] is None:
                out[i] = vec.final_info(int(i))["avg_jct"] / 3600.0
    return out


def planner_jcts(job):
    f, seed, n = job
    from gpuplace import _core

    teacher = _core.Teacher(PLANNER, n, seed=seed)
    return mean_jcts(f, seed, n, teacher.act)


def probe(args, bar_kw) -> list[str]:
    import numpy as np
    import torch
    from tqdm import tqdm

    from doc_section import mean_sem
    from gpuplace.torch_net import load_checkpoint, masked_logits

    fit_seeds, test_seeds, jct_seeds = range(2, 8), range(8, 10), 10
    jobs = [(f, VALIDATION_SEED + s) for s in [*fit_seeds, *test_seeds] for f in TRAINING]
    t0 = time.time()
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        eps = list(tqdm(pool.imap(planner_states, jobs), total=len(jobs), desc="planner states", unit="episode", **bar_kw))
        planner = list(tqdm(pool.imap(planner_jcts, [(f, VALIDATION_SEED + 100 + k, jct_seeds) for k, f in enumerate(TRAINING)]),
                            total=len(TRAINING), desc="planner JCTs", unit="file", **bar_kw))

    def stack(which):
        parts = [e for (f, s), e in zip(jobs, eps) if s - VALIDATION_SEED in which]
        return [torch.from_numpy(np.concatenate([p[k] for p in parts])) for k in range(4)]

    fit, test = stack(fit_seeds), stack(test_seeds)
    proto, _ = load_checkpoint(str(ROOT / "out" / "models" / args.run / "seed_1" / "ppo.json"))
    torch.set_num_threads(args.workers)
    rows = []
    for weight in (1.0, 3.0):
        torch.manual_seed(0)
        net = proto.__class__(proto.spec, proto.config)  # the round network's architecture, fresh weights
        net.reset_parameters(torch.Generator().manual_seed(1))
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        o, m, t, a = fit
        w = torch.where(t != a, torch.tensor(weight), torch.tensor(1.0))
        for _ in tqdm(range(15), desc=f"fit, overrules x{weight:g}", unit="epoch", **bar_kw):
            perm = torch.randperm(len(t))
            for b in range(0, len(t) - 511, 512):
                i = perm[b:b + 512]
                ce = torch.nn.functional.cross_entropy(masked_logits(net.logits(o[i], m[i]), m[i]), t[i], reduction="none")
                loss = (ce * w[i]).sum() / w[i].sum()
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                opt.step()
        net.eval()
        o, m, t, a = test
        with torch.no_grad():
            pred = torch.cat([masked_logits(net.logits(o[b:b + 8192], m[b:b + 8192]), m[b:b + 8192]).argmax(-1)
                              for b in range(0, len(t), 8192)])
        over, dep = t != a, pred != a

        def act(vec):
            with torch.no_grad():
                return net.act(np.array(vec.observations), np.array(vec.action_masks, dtype=bool))

        def first(vec):  # the advisor's fill: the first valid slot
            return np.array(vec.action_masks, dtype=bool).argmax(-1)

        diff, pdiff = [], []
        for k, f in enumerate(tqdm(TRAINING, desc="network JCTs", unit="file", **bar_kw)):
            base = mean_jcts(f, VALIDATION_SEED + 100 + k, jct_seeds, first)
            diff += [x - y for x, y in zip(mean_jcts(f, VALIDATION_SEED + 100 + k, jct_seeds, act), base)]
            pdiff += [x - y for x, y in zip(planner[k], base)]
        rows.append((weight, int(over.sum()), int((pred[over] == t[over]).sum()), int(dep.sum()), int(((pred == t) & dep).sum()),
                     int((dep & ~over).sum()), int((~over).sum()), mean_sem(diff), sum(x < 0 for x in diff), mean_sem(pdiff),
                     sum(x < 0 for x in pdiff)))
    n_fit, n_test = len(fit[2]), len(test[2])
    out = [
        f"A fresh network of the same architecture fit in torch to the planner's actions on {n_fit:,} decisions with a choice "
        f"({int((fit[2] != fit[3]).sum()):,} overrules; validation seeds {VALIDATION_SEED + fit_seeds[0]:,} to "
        f"{VALIDATION_SEED + fit_seeds[-1]:,} of each training file; 15 epochs, Adam 1e-3, minibatches of 512, the overrules' "
        f"cross-entropy weighted as given), measured on {n_test:,} decisions of seeds {VALIDATION_SEED + test_seeds[0]:,} and "
        f"{VALIDATION_SEED + test_seeds[-1]:,}; then its mean JCT and the planner's, minus class_gittins's on the same "
        f"{jct_seeds * len(TRAINING)} episodes ({jct_seeds} seeds from {VALIDATION_SEED + 100:,} on a file; hours, paired, "
        f"mean ± standard error, lower on x of y). {(time.time() - t0) / 60:.0f} min on 2 cores. Generated by "
        f"`experiments/round_overrules.py --probe`.",
        "",
        "| overrules weighted | overrules it makes | its departures from the advisor that are the planner's | spurious departures "
        "(where the planner follows the advisor) | network − class_gittins | the planner (causal) − class_gittins |",
        "|---|---|---|---|---|---|",
    ]
    for weight, n_over, hit, n_dep, good, spur, n_follow, (dm, ds), dl, (pm, ps), pl in rows:
        n = jct_seeds * len(TRAINING)
        out.append(f"| x{weight:g} | {hit / n_over:.3f} ({hit:,} of {n_over:,}) | {good / max(n_dep, 1):.3f} ({good:,} of {n_dep:,}) "
                   f"| {spur / n_follow:.4f} ({spur:,} of {n_follow:,}) | {dm:+.3f} ± {ds:.3f} h ({dl}/{n}) "
                   f"| {pm:+.3f} ± {ps:.3f} h ({pl}/{n}) |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", default="philly_hidden_round_planner", help="the training run under out/models/")
    ap.add_argument("--seeds", type=int, default=2, help="validation seeds per training file")
    ap.add_argument("--workers", type=int, default=2, help="episodes at a time")
    ap.add_argument("--probe", action="store_true", help="the learnability probe instead (section round-overrules-probe)")
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/rounds.md")
    args = ap.parse_args()
    from tqdm import tqdm

    for i in SEEDS:
        if not (ROOT / "out" / "models" / args.run / f"seed_{i}" / "ppo.json").is_file():
            sys.exit(f"out/models/{args.run}/seed_{i}/ppo.json: not found; train it first "
                     f"(experiments/round_agent.py --teacher {PLANNER})")
    if args.probe:
        return finish(probe(args, {"file": sys.stderr}), DOC, ROOT, args.print, section="round-overrules-probe")
    jobs = [(f, VALIDATION_SEED + s, args.run) for f in TRAINING for s in range(args.seeds)]
    t0 = time.time()
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        rows = [r for ep in tqdm(pool.imap(episode, jobs), total=len(jobs), desc="planner episodes", unit="episode",
                                 file=sys.stderr) for r in ep]
    minutes = (time.time() - t0) / 60
    follow = [r for r in rows if r[0] == r[1]]
    over = [r for r in rows if r[0] != r[1]]

    def share(part, whole):
        return f"{part / whole:.3f} ({part:,} of {whole:,})" if whole else "-"

    out = [
        f"The round planner `{PLANNER}` (causal) acting in the round action mode on {len(jobs)} validation episodes "
        f"({args.seeds} seeds from {VALIDATION_SEED:,} on each of the {len(TRAINING)} training files; "
        f"`philly_hidden:<file>`, 200-job windows, durations hidden, class_gittins advising): {len(rows):,} decisions "
        f"with two or more valid slots, on {len(over):,} of which ({len(over) / len(rows):.3f}) the planner takes "
        f"another slot than the advisor's choice (the first valid slot). At each of them, the greedy action of each "
        f"training seed's network of `{args.run}` in the same state. {minutes:.0f} min on 2 cores. Generated by "
        f"`experiments/round_overrules.py`.",
        "",
        "| network | agrees with the planner | where the planner takes the advisor's choice | where it overrules it | "
        "where it overrules, the network takes the advisor's choice | where the planner takes the advisor's choice, "
        "the network does not |",
        "|---|---|---|---|---|---|",
    ]
    for k, i in enumerate(SEEDS):
        n = 2 + k
        out.append(
            f"| seed_{i} | {share(sum(r[n] == r[0] for r in rows), len(rows))} "
            f"| {share(sum(r[n] == r[0] for r in follow), len(follow))} "
            f"| {share(sum(r[n] == r[0] for r in over), len(over))} "
            f"| {share(sum(r[n] == r[1] for r in over), len(over))} "
            f"| {share(sum(r[n] != r[1] for r in follow), len(follow))} |")
    return finish(out, DOC, ROOT, args.print, section="round-overrules")


if __name__ == "__main__":
    sys.exit(main())
