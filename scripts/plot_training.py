#!/usr/bin/env python3
"""The plots of a training run, drawn by the installed package: the same as

    python3 -m gpuplace plot DIR

(kept for `python3 scripts/plot_training.py --dir DIR`; needs gpuplace with its plot extra).
"""
import argparse
import sys

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="a run folder of gpuplace-train or python -m gpuplace train")
    a = ap.parse_args()
    try:
        from gpuplace.cli import main
    except ImportError as e:
        sys.exit(f"plot_training.py: the gpuplace package is not installed ({e}): pip install './python[plot]'")
    sys.exit(main(["plot", a.dir]))
