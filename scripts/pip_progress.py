#!/usr/bin/env python3
"""Progress of ``pip install -v`` when nobody watches a terminal (CI, a notebook, a pipe): pip
shows the build's output only with -v, and then as thousands of lines, or prints nothing for the
minutes the C++ core takes to compile. This filter reads pip's verbose output on stdin, keeps it
whole in a log file, and prints one line per build phase (resolving, configuring CMake, compiling
the core, making the wheel, installing) and, at least every ``--every`` seconds (default 20), where
the build is: ninja's ``[done/total]`` compile steps, the elapsed time and an estimate of the
rest. On a failed install (no "Successfully installed" line) it prints the log's last lines.

    pip install -v "./python[sb3,plot]" 2>&1 | python3 scripts/pip_progress.py --log pip.log

Hand-written (stdlib only) because it must run before anything is installed; the phases are those
of scikit-build-core's ``***`` lines and ninja's status lines."""

from __future__ import annotations

import argparse
import collections
import re
import sys
import threading
import time

PHASES = [  # (pattern, phase name), checked in order on every line
    (re.compile(r"^\s*Building wheel for .*: started"), "building the wheel"),
    (re.compile(r"^\*\*\* Configuring CMake"), "configuring CMake"),
    (re.compile(r"^\*\*\* Building project"), "compiling the C++ core"),
    (re.compile(r"^\*\*\* Installing project"), "installing the core into the wheel"),
    (re.compile(r"^\*\*\* (Making|Created) wheel"), "making the wheel"),
    (re.compile(r"^Installing collected packages"), "installing the packages"),
    (re.compile(r"^(Processing|Collecting|Requirement already satisfied|Obtaining)"), "resolving dependencies"),
]
NINJA = re.compile(r"^\s*\[(\d+)/(\d+)\]")
OWN = re.compile(r"^\s*(gpuplace build .*)")  # python/cmake/build_progress.py's lines, shown as they are


def _mmss(s: float) -> str:
    return f"{int(s) // 60}:{int(s) % 60:02d}"


class Progress:
    def __init__(self, every: float, out=sys.stdout):
        self.every, self.out = every, out
        self.start = self.last_print = time.monotonic()
        self.phase, self.phase_start = "starting pip", self.start
        self.done = self.total = 0
        self.lock = threading.Lock()

    def status(self) -> str:
        now = time.monotonic()
        line = f"pip install: {self.phase}, {_mmss(now - self.start)} elapsed"
        if self.phase == "compiling the C++ core" and self.total:
            line += f", {self.done}/{self.total} compile steps"
            if self.done:
                spent = now - self.phase_start
                line += f", about {_mmss(spent / self.done * (self.total - self.done))} to go"
        return line

    def say(self) -> None:
        print(self.status(), file=self.out, flush=True)
        self.last_print = time.monotonic()

    def line(self, text: str) -> None:
        with self.lock:
            own = OWN.match(text)
            if own:
                print(own.group(1), file=self.out, flush=True)
                self.last_print = time.monotonic()
                return
            m = NINJA.match(text)
            if m:
                self.done, self.total = int(m.group(1)), int(m.group(2))
                if self.phase != "compiling the C++ core":
                    self.phase, self.phase_start = "compiling the C++ core", time.monotonic()
                    self.say()
                return
            for pattern, name in PHASES:
                if pattern.match(text):
                    if name != self.phase and not (name == "resolving dependencies" and self.phase != "starting pip"
                                                   and self.phase != name):
                        self.phase, self.phase_start = name, time.monotonic()
                        self.say()
                    return

    def tick(self) -> None:
        with self.lock:
            if time.monotonic() - self.last_print >= self.every:
                self.say()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", default="pip-install.log", help="the whole output of pip, kept here")
    ap.add_argument("--every", type=float, default=20.0, help="seconds between progress lines at most (default 20)")
    ap.add_argument("--tail", type=int, default=40, help="lines of the log shown when the install fails")
    args = ap.parse_args(argv)
    p = Progress(args.every)
    stop = threading.Event()

    def ticker():
        while not stop.wait(1.0):
            p.tick()

    threading.Thread(target=ticker, daemon=True).start()
    last = collections.deque(maxlen=args.tail)
    ok = False
    with open(args.log, "w", encoding="utf-8") as log:
        for raw in sys.stdin:
            log.write(raw)
            text = raw.rstrip("\n")
            last.append(text)
            ok = ok or text.startswith("Successfully installed")
            p.line(text)
    stop.set()
    if ok:
        print(f"pip install: done in {_mmss(time.monotonic() - p.start)} (the whole output: {args.log})", flush=True)
        return 0
    print(f"pip install: no 'Successfully installed' line; the last {len(last)} lines of {args.log}:", flush=True)
    for text in last:
        print(f"  {text}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
