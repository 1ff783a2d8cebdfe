"""Writes that cannot destroy: only regular files are replaced, symlinks are written through,
modes kept, new files get the umask mode, temporaries never stay behind (errors, SIGTERM, kill -9 + rerun)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kubedra.errors import InputError
from kubedra.report.output import write_atomic
from kubedra.safewrite import TEMP_PREFIX, write_files


def temps(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.startswith(TEMP_PREFIX)]


def test_new_file_gets_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(str(tmp_path / "a.html"), "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.html").st_mode) == 0o644
    assert not temps(tmp_path)


def test_existing_mode_is_kept(tmp_path: Path) -> None:
    p = tmp_path / "a.yaml"
    p.write_text("old")
    p.chmod(0o640)
    write_atomic(str(p), "new")
    assert p.read_text() == "new"
    assert stat.S_IMODE(p.stat().st_mode) == 0o640


def test_symlink_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text("old")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    write_atomic(str(link), "new")
    assert link.is_symlink()
    assert real.read_text() == "new"


def test_fifo_is_refused_and_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "out.html"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="FIFO"):
        write_atomic(str(fifo), "x")  # would block forever if opened
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not temps(tmp_path)


@pytest.mark.parametrize("target", ["/dev/null", "/dev/full"])
def test_device_is_refused(target: str) -> None:
    if not os.path.exists(target):
        pytest.skip(f"no {target}")
    with pytest.raises(InputError, match="character device"):
        write_atomic(target, "x")
    assert stat.S_ISCHR(os.stat(target).st_mode)


def test_folder_and_missing_folder_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="a folder"):
        write_atomic(str(tmp_path), "x")
    with pytest.raises(InputError, match="does not exist"):
        write_atomic(str(tmp_path / "missing" / "r.html"), "x")


def test_read_only_is_refused(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may write anything")
    p = tmp_path / "ro.yaml"
    p.write_text("old")
    p.chmod(0o444)
    with pytest.raises(InputError, match="read-only"):
        write_atomic(str(p), "new")
    assert p.read_text() == "old"


def test_all_or_nothing_when_one_target_is_bad(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("old")
    os.mkfifo(tmp_path / "bad.yaml")
    with pytest.raises(InputError):
        write_files({str(good): "new", str(tmp_path / "bad.yaml"): "new"})
    assert good.read_text() == "old"
    assert not temps(tmp_path)


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f"{TEMP_PREFIX}{dead.stdout.strip()}-0000"
    stale.write_text("half")
    live = tmp_path / f"{TEMP_PREFIX}{os.getppid()}-0000"  # a live process: not ours to remove
    live.write_text("busy")
    write_atomic(str(tmp_path / "r.html"), "x")
    assert not stale.exists()
    assert live.exists()


def test_sigterm_during_a_write_leaves_no_temporary(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, time
        from kubedra.report.output import write_atomic
        real_fsync = os.fsync
        def slow(fd):
            open({str(tmp_path / "started")!r}, "w").close()
            time.sleep(30)
        os.fsync = slow
        write_atomic({str(tmp_path / "r.html")!r}, "x" * 100000)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ})
    deadline = time.monotonic() + 20
    while not (tmp_path / "started").exists():
        assert time.monotonic() < deadline
        assert proc.poll() is None
        time.sleep(0.02)
    assert temps(tmp_path)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 128 + signal.SIGTERM
    assert not temps(tmp_path)
    assert not (tmp_path / "r.html").exists()
