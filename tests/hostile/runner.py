"""Run one kubedra command in its own process with a time and memory limit.

Each case forks the test process (kubedra is already imported, so a case costs milliseconds, not the
interpreter's start-up): the child limits its address space (RLIMIT_AS, ``MEMORY_HEADROOM`` above what the
parent already maps) and its run time (SIGALRM kills it), points stdin at /dev/null and stdout/stderr at files,
and runs ``kubedra.cli.main`` exactly as the console script does.
"""

from __future__ import annotations

import io
import os
import resource
import signal
import sys
import tempfile
import time
from dataclasses import dataclass

MEMORY_HEADROOM = 768 * 1024 * 1024  # bytes a case may map beyond the test process itself
TIME_LIMIT = 30  # seconds per case (a loaded 2-core CI machine; a healthy case takes well under 2 s)


@dataclass
class Result:
    argv: list[str]
    code: int  # exit code; -N when killed by signal N
    stdout: str
    stderr: str
    seconds: float

    def __str__(self) -> str:
        return f"kubedra {' '.join(self.argv)} -> {self.code} in {self.seconds:.2f}s\n{self.stderr[-2000:]}"


_warm = False
# The optional extras (pyproject.toml): a module that imports one at top level may fail to import without it.
OPTIONAL_EXTRAS = {"matplotlib", "ortools", "pynvml"}


def warm_once() -> None:
    global _warm
    if not _warm:
        warm()
        _warm = True


def warm() -> None:
    """Import every kubedra module once in the test process, so forked cases do not each pay for it."""
    import importlib
    import pkgutil

    import kubedra

    for mod in pkgutil.walk_packages(kubedra.__path__, "kubedra."):
        if mod.name.startswith("kubedra.testing") or mod.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(mod.name)
        except (
            ModuleNotFoundError
        ) as e:  # an optional extra, imported by the verb that needs it; nothing else
            if (e.name or "").split(".")[0] not in OPTIONAL_EXTRAS:
                raise


def _vm_size() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def run(argv: list[str], cwd: str, time_limit: int = TIME_LIMIT) -> Result:
    warm_once()
    limit = _vm_size() + MEMORY_HEADROOM
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 70
            try:
                os.chdir(cwd)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
                sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
                sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8")
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                signal.signal(signal.SIGALRM, signal.SIG_DFL)
                signal.alarm(time_limit)
                from kubedra.cli import main

                try:
                    main(argv)
                    code = 0
                except SystemExit as e:
                    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                except MemoryError:
                    code = 71
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        _, status = os.waitpid(pid, 0)
        seconds = time.monotonic() - start
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Result(
            argv,
            code,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            seconds,
        )
