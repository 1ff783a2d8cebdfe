"""Ctrl-C exits 130 with one line on stderr, as README, every --help and docs/exit-codes.md promise: a real
process is interrupted while it waits (on stdin, on a stalled cluster read), as a user's Ctrl-C would.

Each test waits for the process to reach the wait (the kernel says it sleeps on the pipe; the fake API server
saw the request), never for a fixed time."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kubedra.testing.faultapi import FaultAPI

pytestmark = pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="needs Linux /proc")

STALL = 120.0  # the fake's stalled read lasts longer than any test may: an exit means the interrupt ended it


def _default_sigint() -> None:
    """In the child: SIGINT as a terminal's foreground job has it. A suite started in the background by a
    non-interactive shell (``make test &``, nohup) inherits SIGINT ignored, and Python then never raises
    KeyboardInterrupt, so the process under test would not be the one a user's Ctrl-C reaches."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kubedra", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )


def _wait_for(proc: subprocess.Popen[str], ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"exited {proc.returncode} before it was interrupted: {proc.communicate()[1]}")
        assert time.monotonic() < deadline, "never reached the wait"
        time.sleep(0.05)


def _interrupt(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("Ctrl-C did not end the command")
    return proc.returncode, out, err


def _sleeps_on_pipe(proc: subprocess.Popen[str]) -> bool:
    try:
        return "pipe" in Path(f"/proc/{proc.pid}/wchan").read_text()
    except OSError:
        return False


def test_ctrl_c_while_reading_stdin_is_130_and_one_line() -> None:
    proc = _start("audit", "-")
    _wait_for(proc, lambda: _sleeps_on_pipe(proc))
    code, out, err = _interrupt(proc)
    assert (code, out, err) == (130, "", "kubedra: interrupted\n")


@pytest.fixture
def api() -> Iterator[FaultAPI]:
    with FaultAPI(stall_seconds=STALL) as server:
        server.fault("/api/v1/pods", "stall")
        yield server


@pytest.mark.parametrize(
    "verb",
    [
        ["snapshot", "-o", "{tmp}/snap.yaml", "--no-helm-releases"],
        # audit reads clusters on worker threads: Python joins a ThreadPoolExecutor's at exit, which held a
        # Ctrl-C until the stalled read timed out
        ["audit", "--cluster", "--no-helm-releases"],
        ["verify"],
    ],
    ids=lambda v: v[0],
)
def test_ctrl_c_during_a_cluster_read_is_130_and_one_line(
    api: FaultAPI, tmp_path: Path, verb: list[str]
) -> None:
    kc = api.kubeconfig(tmp_path / "kc")
    args = [a.format(tmp=tmp_path) for a in verb]
    proc = _start(*args, "--kubeconfig", str(kc), "--request-timeout", str(int(STALL)))
    _wait_for(proc, lambda: any(path.startswith("/api/v1/pods") for _, path in api.requests))
    code, out, err = _interrupt(proc)
    assert (code, out, err) == (130, "", "kubedra: interrupted\n")
    assert not (tmp_path / "snap.yaml").exists()  # nothing written
