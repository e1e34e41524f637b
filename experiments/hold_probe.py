#!/usr/bin/env python3
"""Prints how well the shipped Philly network's observation predicts where its teacher holds a job that pack_wait
would place (the teacher's own holds): along the teacher's episodes, at each decision where DEFER is allowed and
pack_wait places, the observation the network sees and whether the teacher holds. Classifiers fitted on the training
files' states (gradient boosting and logistic regression, scikit-learn) are scored on the validation files' by the
area under the ROC curve, beside the network's own probability of DEFER and the verdict of the same teacher with other
futures (another seed). About 8 minutes on the validation files, 13 on the held-out ones (the teacher's episodes).

    experiments/hold_probe.py [--train-seeds 16] [--seeds 40] [--split validation|held-out]

Needs scikit-learn (`pip install "./python[experiments]"`). The episodes are experiments/idle_waiting.py's (64
DGX-A100 GPUs, 200-job windows, offered load 1.0, DEFER allowed, sjf): the recipe's five training files on seeds
3000000 onwards (used for fitting alone), the two validation files on the validation seeds (2000000 onwards); with
`--split held-out` the four held-out files on the held-out seeds (1000000 onwards; reported, no choice made on them).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))
from idle_waiting import PHILLY_FILES, philly_scenario, with_queue  # noqa: E402
from philly_files import NET, OTHER_FUTURES, TEACHER, defer_probability  # noqa: E402

from gpuplace import _core, ppo  # noqa: E402
from gpuplace.config import make_core_env, scenario_of  # noqa: E402
from gpuplace.progress import progress_bar  # noqa: E402

RECIPE = json.loads((ROOT / "data" / "recipes" / f"{NET}.json").read_text())
TRAINING_FILES = [pathlib.Path(p).stem for p in RECIPE["train_on"][0]["workload"]["path"]]


def scenario(file: str) -> dict:
    """A Philly file as the teacher plays it: 64 GPUs, 200-job windows at offered load 1.0, DEFER allowed, sjf."""
    if file not in TRAINING_FILES:
        return with_queue(philly_scenario(64, "placement", file), "sjf")
    d = scenario_of(f"philly:{file}").to_dict()
    d["topology"] = {"preset": "dgx_a100", "racks": 2, "nodes_per_rack": 4}
    d["workload"]["episode_jobs"] = 200
    d["env"].update(queue_policy="sjf", backfill=True, allow_defer=True, action_mode="placement")
    return d


def states(file: str, seeds: list[int], net, bar) -> dict[str, np.ndarray]:
    """Along the teacher's episodes, at each decision where DEFER is allowed and pack_wait places: the observation,
    whether the teacher holds, whether the teacher with other futures holds, and the network's probability of DEFER."""
    obs, teacher, second, p_net = [], [], [], []
    for s in seeds:
        e = make_core_env(scenario(file))
        e.reset(s)
        name = TEACHER.partition("+")[0]
        t, other, base = _core.Heuristic(name), _core.Heuristic(name), _core.Heuristic("pack_wait")
        t.reset(s)
        other.reset(s + OTHER_FUTURES)
        base.reset(s)
        while not e.done:
            hold = e.defer_action
            a = t.act(e)
            if e.action_mask[hold] and base.act(e) != hold:
                obs.append(np.array(e.observation, dtype=np.float32))
                teacher.append(a == hold)
                second.append(other.act(e) == hold)
                p_net.append(defer_probability(net, e))
            e.step(int(a))
        bar.update(1)
    return {"obs": np.stack(obs), "teacher": np.array(teacher), "second": np.array(second), "p": np.array(p_net)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train-seeds", type=int, default=16, help="teacher episodes a training file to fit on (default 16)")
    ap.add_argument("--seeds", type=int, default=40, help="seeds a file to score on (default 40)")
    ap.add_argument("--split", choices=["validation", "held-out"], default="validation",
                    help="the files scored on: the validation ones (default) or the held-out ones (reported only)")
    args = ap.parse_args()
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.metrics import roc_auc_score
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
    except ImportError:
        ap.error('needs scikit-learn: pip install "./python[experiments]"')
    net = ppo.load_model(NET)
    files = list(PHILLY_FILES[args.split])
    first = 2_000_000 if args.split == "validation" else 1_000_000
    with progress_bar(total=len(TRAINING_FILES) * args.train_seeds + len(files) * args.seeds, desc="teacher episodes") as bar:
        fit = [states(f, [3_000_000 + i for i in range(args.train_seeds)], net, bar) for f in TRAINING_FILES]
        scored = {f: states(f, [first + i for i in range(args.seeds)], net, bar) for f in files}
    X = np.concatenate([d["obs"] for d in fit])
    y = np.concatenate([d["teacher"] for d in fit])
    models = {"gradient boosting": HistGradientBoostingClassifier(max_iter=300, learning_rate=0.05, random_state=0),
              "logistic regression": make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000))}
    for m in models.values():
        m.fit(X, y)
    scored[f"the {len(files)} together"] = {k: np.concatenate([scored[f][k] for f in files]) for k in scored[files[0]]}
    print(f"Where the teacher `{TEACHER}` holds a job that pack_wait places: fitted on {len(y):,} such decisions of "
          f"{len(TRAINING_FILES)} training files ({int(y.sum()):,} holds, {args.train_seeds} seeds a file), scored on the "
          f"{args.split} files ({args.seeds} seeds a file from {first}): the area under the ROC curve of each predictor of the teacher's "
          "hold, and its mean probability of a hold where the teacher holds / where it places. Generated by "
          "`experiments/hold_probe.py`.\n")
    print(f"| {args.split} file | decisions (teacher holds) | the network's probability of DEFER | "
          + " | ".join(models) + " | the teacher with other futures |")
    print("|---" * (len(models) + 4) + "|")
    for f, d in scored.items():
        t = d["teacher"]
        cells = [d["p"]] + [m.predict_proba(d["obs"])[:, 1] for m in models.values()]
        row = [f"{roc_auc_score(t, c):.3f} ({c[t].mean():.3f} / {c[~t].mean():.3f})" for c in cells]
        print(f"| {f} | {len(t):,} ({int(t.sum()):,}) | " + " | ".join(row) + f" | {roc_auc_score(t, d['second']):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
