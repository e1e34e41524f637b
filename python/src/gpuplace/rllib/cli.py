"""``python -m gpuplace rllib train|tune``: RLlib PPO training and Tune sweeps on local Ray or a
Ray cluster (``--address auto``). See docs/scale-out.md."""

from __future__ import annotations

import argparse
import os
import sys

from .. import _core
from .._args import check_output_file, check_output_folder, count, seed_list
from .._args import policy_names as _policies
from .._files import atomic_write
from .._deprecated import add_renamed_option
from ..command import run as run_command
from ..config import load_scenario


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scenario", default="default", help="preset, JSON file or JSON text")
    p.add_argument("--address", help="Ray cluster to join (auto: the one `ray start` made on this machine); "
                                     "default: start Ray locally for this run")
    p.add_argument("--num-cpus", type=count(1), help="local Ray only: CPUs Ray may use (default: all)")
    p.add_argument("--iterations", type=count(1), default=10, help="RLlib training iterations")
    p.add_argument("--num-env-runners", type=count(0), default=0,
                   help="env runner actors sampling in parallel (0: sample in the driver / trial process)")
    p.add_argument("--num-envs-per-runner", type=count(1), default=8, help="envs each runner steps as one batch")
    p.add_argument("--torch-threads", type=count(0), default=1,
                   help="torch threads of the driver (train) or of each trial (tune); env runners use 1 (0: torch's default)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a PPO hyperparameter (lr, ent_coef, gamma, gae_lambda, clip_range, vf_coef, n_epochs, "
                        "minibatch_size, train_batch_size); repeatable")


def _hyperparameters(items) -> dict:
    from .train import parse_grid

    out = {}
    for name, vals in parse_grid(items).items():
        if len(vals) != 1:
            raise _core.ConfigError(f"--set {name}: one value expected, got {len(vals)} (use tune --grid to sweep)")
        out[name] = vals[0]
    return out


def _init_ray(args) -> None:
    import ray

    if ray.is_initialized():
        return
    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)


def _print_rows(rows, cols) -> None:
    def fmt(v):
        return f"{v:.6g}" if isinstance(v, float) else str(v)

    cells = [[fmt(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.rjust(w) for c, w in zip(cols, widths)))
    for x in cells:
        print("  ".join(v.rjust(w) for v, w in zip(x, widths)))


def cmd_train(args) -> int:
    from ..evaluation import evaluate_agent
    from ..torch_net import save_checkpoint
    from .train import greedy_policy, train

    sc = load_scenario(args.scenario)
    hp = _hyperparameters(args.set)
    policies = _policies(args.policies)
    check_output_file(args.csv, "--csv")
    check_output_folder(args.out, "--out")
    _init_ray(args)  # after every check: nothing starts on bad input

    def show(row):
        if not args.quiet:
            print(f"iteration {row['iteration']:>4}  env steps {row['env_steps']:>9}  episodes {row['episodes']:>6}  "
                  f"return {row['episode_return_mean']:>10.4g}  {row['seconds']:>7.1f} s", flush=True)

    run = train(sc, iterations=args.iterations, out=args.out, num_env_runners=args.num_env_runners,
                num_envs_per_env_runner=args.num_envs_per_runner, seed=args.seed, hyperparameters=hp, on_iteration=show,
                torch_threads=args.torch_threads)
    try:
        last = run["rows"][-1]
        print(f"trained {last['env_steps']} env steps in {last['seconds']:.0f} s "
              f"({last['env_steps'] / max(last['seconds'], 1e-9):,.0f} env steps/s); learning CSV {run['progress_csv']}")
        print(f"RLlib checkpoint {run['checkpoint']}")
        cpp = os.path.join(os.path.abspath(args.out), "ppo.json")
        save_checkpoint(cpp, run["module"].net, scenario=sc)
        print(f"C++ checkpoint {cpp} (gpuplace-train --load, gpuplace.torch_net.load_checkpoint)")
        if args.seeds > 0:
            seeds = list(_core.held_out_seeds(args.seeds))
            rep = _core.evaluate(sc, policies, seeds, 1)
            evaluate_agent(greedy_policy(run["module"]), sc, seeds, name="rllib_ppo", report=rep)
            print(f"scenario {rep.scenario}, {len(seeds)} held-out seeds")
            print(rep.table(), end="")
            if args.csv:
                atomic_write(args.csv, rep.csv())
                print(f"wrote {args.csv}")
    finally:
        run["algo"].stop()
    return 0


def cmd_tune(args) -> int:
    from .train import config_means, parse_grid, sweep

    grid = parse_grid(args.grid)
    seeds = args.seeds  # checked by argparse (gpuplace._args.seed_list)
    sc = load_scenario(args.scenario)
    hp = _hyperparameters(args.set)
    if hp:
        grid = {**{k: [v] for k, v in hp.items()}, **grid}
    check_output_folder(args.out, "--out")
    _init_ray(args)  # after every check: nothing starts on bad input
    rows = sweep(sc, grid, seeds=seeds, iterations=args.iterations, out=args.out, validation_seeds=args.validation_seeds,
                 num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs_per_runner,
                 max_concurrent_trials=args.max_concurrent, torch_threads=args.torch_threads)
    params = list(grid)
    print(f"scenario {sc['name']}: {len(rows)} trials, mean JCT (hours) on {args.validation_seeds} validation seeds "
          f"(2000000 + i), best first")
    _print_rows(rows, params + ["seed", "val_jct_h", "episode_return_mean", "env_steps", "trial"])
    path = os.path.join(os.path.abspath(args.out), "results.csv")
    print(f"wrote {path}")
    best = rows[0]
    print("best trial: " + best["trial"] + " (" + ", ".join(f"{p}={best[p]:g}" for p in params + ["seed"]) +
          f"), validation JCT {best['val_jct_h']:.4f} h")
    if len(seeds) > 1 and params:
        means = config_means(rows, params)
        print("per configuration, over the seeds (mean, standard error):")
        _print_rows(means, params + ["seeds", "val_jct_h_mean", "val_jct_h_se"])
    return 0


def build_parser(prog: str = "python -m gpuplace rllib") -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("train", help="PPO on RLlib, then the evaluation harness on held-out seeds",
                       epilog="example: python -m gpuplace rllib train --scenario default --iterations 5 --out runs/rllib")
    _add_common(p)
    p.add_argument("--seed", type=count(0, 2**32 - 1, "a seed"), default=1,
                   help="training seed (env runner w seeds its envs with seed + w)")
    p.add_argument("--out", default="runs/rllib", help="progress.csv, RLlib checkpoint/, ppo.json (C++ checkpoint)")
    p.add_argument("--seeds", type=count(0, 10_000_000), default=10,
                   help="held-out seeds (1000000 + i) for the final table (0: skip)")
    add_renamed_option(p, "--eval-seeds", "--seeds", type=count(0, 10_000_000))
    p.add_argument("--policies", help="heuristics in the final table (default: all)")
    p.add_argument("--csv", help="write the final table as CSV")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(fn=cmd_train)
    p = sub.add_parser("tune", help="a Tune grid sweep; table of validation JCT per trial",
                       epilog="example: python -m gpuplace rllib tune --grid lr=0.0003,0.001 --seeds 1,2 --iterations 5")
    _add_common(p)
    p.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="one hyperparameter and its values, e.g. lr=0.0003,0.001; repeatable")
    p.add_argument("--seeds", type=seed_list, default=[1], help="comma-separated training seeds (each combination runs with each)")
    p.add_argument("--validation-seeds", type=count(1), default=8, help="validation episodes per trial (seeds 2000000 + i)")
    p.add_argument("--max-concurrent", type=count(0), default=0, help="trials at once (0: as many as the CPUs allow)")
    p.add_argument("--out", default="runs/rllib_tune", help="Tune's trial folders and results.csv")
    p.set_defaults(fn=cmd_tune)
    return ap


def main(argv=None) -> int:
    """The ``rllib`` command line; returns the exit status (2 on bad input, with the message)."""
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
