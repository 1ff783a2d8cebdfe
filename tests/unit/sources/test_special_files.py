"""Special files and unreadable paths in input folders: never opened, always reported; exit 2
unless --skip-unreadable (then a warning on stderr and the rest is read). Reading is bounded per file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubedra.errors import InputError
from kubedra.sources import files, reading

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


def kubedra(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubedra", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "ok.yaml").write_text(CM)
    os.mkfifo(tmp_path / "a-fifo.yaml")  # opening it would block forever
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "gone.yaml")
    return tmp_path


def test_walk_reports_fifo_and_broken_link(folder: Path) -> None:
    with pytest.raises(InputError, match="FIFO, not read; 1 more path") as e:
        list(files.iter_manifest_files([str(folder)]))
    assert "\n" not in str(e.value)


def test_skip_unreadable_warns_and_goes_on(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(reading, "SKIP_UNREADABLE", True)
    assert list(files.iter_manifest_files([str(folder)])) == [str(folder / "ok.yaml")]
    err = capsys.readouterr().err
    assert "a-fifo.yaml: a FIFO, not read: skipped" in err
    assert "dangling.yaml: cannot read" in err


@pytest.mark.parametrize("verb", ["validate", "audit", "migrate", "simulate"])
def test_every_verb_exits_2_without_blocking(folder: Path, verb: str) -> None:
    proc = kubedra(verb, str(folder), timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert any("FIFO" in ln and "--skip-unreadable" in ln for ln in lines), proc.stderr
    assert "Traceback" not in proc.stderr


def test_validate_skip_unreadable_flag(folder: Path) -> None:
    proc = kubedra("validate", str(folder), "--skip-unreadable")
    assert proc.returncode == 0, proc.stderr
    assert "skipped" in proc.stderr


def test_dev_zero_is_bounded() -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    proc = kubedra("validate", "/dev/zero")
    assert proc.returncode == 2
    assert "larger than" in proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_unreadable_subfolder(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every folder")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "a.yaml").write_text(CM)
    (tmp_path / "locked").chmod(0)
    try:
        with pytest.raises(InputError, match="cannot read folder"):
            list(files.iter_manifest_files([str(tmp_path)]))
    finally:
        (tmp_path / "locked").chmod(0o755)


@pytest.mark.parametrize("size", [0, 1, 100, (1 << 16) + 7])
def test_a_file_read_in_short_reads_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """A regular file is read until it has given what fstat said it holds (one read, no read for the end),
    but a read that gives less (a network or FUSE file system may) is not taken for the end."""
    data = bytes(i % 251 for i in range(size))
    (tmp_path / "f.yaml").write_bytes(data)
    calls: list[int] = []
    real = os.read

    def short(fd: int, n: int) -> bytes:
        calls.append(n)
        return real(fd, min(n, 10))

    monkeypatch.setattr(os, "read", short)
    assert reading.read_bytes(str(tmp_path / "f.yaml")) == data
    assert len(calls) == max(1, -(-size // 10))  # no read past the end once the file's size is read
