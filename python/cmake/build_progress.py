"""Progress of the extension's build on the terminal (python/CMakeLists.txt runs it).

pip shows a build backend's output only with ``-v``, so ``pip install ./python`` would say nothing
for minutes. CMake runs each compile and link step of the core through this script (its compiler
and linker launcher): it says when the step starts, every 25 seconds while it runs, and when it
ends, with the time since the build was configured (the configure step says how many compile
steps there are). The lines go to the terminal itself (``/dev/tty``); without one (CI, a notebook,
a pipe) to the standard error of the pip (or uv) process that runs the build, whose own output is
not captured, found among the ancestor processes at configure time (Linux); else to the standard
output, which ninja shows when the step ends and
``pip install -v`` shows. ``GPUPLACE_BUILD_PROGRESS=0`` turns the lines off.

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

HEARTBEAT = 25.0  # seconds between "still ..." lines


def _read_start(start_file: str) -> tuple[float | None, str]:
    """The build's start time and the recorded place for lines outside the build's capture ("")."""
    try:
        with open(start_file, encoding="utf-8") as f:
            lines = f.read().split("\n")
        return float(lines[0].strip()), (lines[1].strip() if len(lines) > 1 else "")
    except (OSError, ValueError):
        return None, ""


def _is_pip(pid: int) -> bool:
    """Whether process ``pid`` is pip (``pip ...``, ``python -m pip ...``) or uv, which capture a
    build's output."""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    names = [os.path.basename(a) for a in argv[:3]]
    return any(n in ("pip", "pip3", "uv") or n.startswith("pip3.") for n in names)


def _outside_capture() -> str:
    """``/proc/<pid>/fd/2`` of the pip (or uv) process this build runs under: pip shows the build's
    output only with -v, but its own standard error is where the user looks. "" when there is none
    or this is not Linux."""
    try:
        pid = os.getppid()
        while pid > 1:
            if _is_pip(pid):
                return f"/proc/{pid}/fd/2"
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return ""


def _clock(start_file: str) -> str:
    start, _ = _read_start(start_file)
    if start is None:
        return ""
    t = time.time() - start
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
    if _tty_write("\r" + line + "\n"):
        return
    outside = _read_start(start_file)[1]
    if outside:
        try:
            with open(outside, "w", encoding="utf-8") as f:
                f.write(line + "\n")
            return
        except OSError:
            pass
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
        outside = "" if _tty_write("") else _outside_capture()
        with open(argv[1], "w", encoding="utf-8") as f:
            f.write(f"{time.time():.3f}\n{outside}\n")
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
