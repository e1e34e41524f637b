"""Progress of the extension's build on the terminal (python/CMakeLists.txt runs it).

pip shows a build backend's output only with ``-v``, so ``pip install ./python`` would say nothing
for minutes. CMake runs each compile and link step of the core through this script (its compiler
and linker launcher): it says on the terminal itself (``/dev/tty``) when the step starts, every
minute while it runs, and when it ends, with the time since the build was configured. Without a
terminal (CI, a notebook) the lines go to the standard output, which ``pip install -v`` shows.
``GPUPLACE_BUILD_PROGRESS=0`` turns the lines off.

    build_progress.py --start FILE              at configure time: the build starts now
    build_progress.py --say FILE TEXT           one line
    build_progress.py FILE STEP -- COMMAND...   runs COMMAND, saying what STEP is doing
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

HEARTBEAT = 60.0  # seconds between "still ..." lines


def _clock(start_file: str) -> str:
    try:
        with open(start_file, encoding="utf-8") as f:
            t = time.time() - float(f.read().strip())
    except (OSError, ValueError):
        return ""
    return f"[{int(t) // 60}:{int(t) % 60:02d}] "


def _quiet() -> bool:
    return os.environ.get("GPUPLACE_BUILD_PROGRESS", "").strip().lower() in ("0", "off", "no", "false")


def _tty_write(text: str) -> bool:
    """Writes to the terminal; False when there is none."""
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(text)
        return True
    except OSError:
        return False


def say(start_file: str, text: str) -> None:
    if _quiet():
        return
    line = f"gpuplace build {_clock(start_file)}{text}"
    # from the line's start, over the character pip's spinner may have left there
    if not _tty_write("\r" + line + "\n"):
        print(line, flush=True)


def describe(step: str) -> str:
    """What a step does, in words: "common", "variant:<level>", "link:<module>"."""
    kind, _, what = step.partition(":")
    if kind == "common":
        return "compiling the bindings (python/cpp/, one translation unit)"
    if kind == "variant":
        return f"compiling the {what} core (module.cpp and the C++ PPO)"
    if kind == "link":
        return f"linking gpuplace.{what}"
    return step


def run(start_file: str, step: str, command: list[str]) -> int:
    what = describe(step)
    say(start_file, f"{what} ...")
    t0 = time.monotonic()
    proc = subprocess.Popen(command)
    done = threading.Event()

    def heartbeat():
        while not done.wait(HEARTBEAT):
            say(start_file, f"{what}: {int(time.monotonic() - t0)} s so far")

    threading.Thread(target=heartbeat, daemon=True).start()
    rc = proc.wait()
    done.set()
    say(start_file, f"{what}: {'done' if rc == 0 else 'FAILED'} in {time.monotonic() - t0:.0f} s")
    return rc


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "--start":
        with open(argv[1], "w", encoding="utf-8") as f:
            f.write(f"{time.time():.3f}\n")
        if not _quiet():
            _tty_write("\n")  # below pip's "Building wheel ..." line, which stays
        return 0
    if len(argv) >= 3 and argv[0] == "--say":
        say(argv[1], " ".join(argv[2:]))
        return 0
    if len(argv) >= 4 and argv[2] == "--":
        return run(argv[0], argv[1], argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
