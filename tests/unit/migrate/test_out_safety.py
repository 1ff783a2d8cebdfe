"""``migrate --out`` / ``--in-place`` cannot destroy: overlapping --out refused, no silent
overwrite without --force, a new --out appears whole or not at all, --in-place keeps symlinks, modes, CRLF."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kubedra.cli import main
from kubedra.safewrite import TEMP_PREFIX

from .test_gpu import DEPLOYMENT


def run(*args: str) -> tuple[int, str, str]:
    """The CLI as a user runs it (errors printed by kubedra.cli.main, exit code kept)."""
    runner = CliRunner()
    result = runner.invoke(_main, ["migrate", *args])
    return result.exit_code, result.stdout, result.stderr


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def _main(ctx: click.Context) -> None:
    main(ctx.args)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "apps" / "sub").mkdir(parents=True)
    (tmp_path / "apps" / "train.yaml").write_text(DEPLOYMENT)
    (tmp_path / "apps" / "sub" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
    )
    return tmp_path


@pytest.mark.parametrize("out", ["apps", "apps/out", "apps/sub", "."])
def test_out_overlapping_an_input_is_refused(tree: Path, out: str) -> None:
    before = snapshot(tree)
    code, _, err = run(str(tree / "apps"), "--out", str(tree / out))
    assert code == 2
    assert "overlaps the input" in err
    assert len(err.strip().splitlines()) == 1
    assert snapshot(tree) == before


def test_input_file_inside_out_is_refused(tree: Path) -> None:
    code, _, err = run(str(tree / "apps" / "train.yaml"), "--out", str(tree / "apps"))
    assert code == 2
    assert "overlaps" in err


def test_existing_files_need_force(tree: Path) -> None:
    out = tree / "out"
    assert run(str(tree / "apps"), "--out", str(out))[0] == 0
    (out / "train.yaml").write_text("mine\n")
    code, _, err = run(str(tree / "apps"), "--out", str(out))
    assert code == 2
    assert "already exists" in err
    assert "--force" in err
    assert (out / "train.yaml").read_text() == "mine\n"
    (out / "train.yaml").chmod(0o444)
    assert run(str(tree / "apps"), "--out", str(out), "--force")[0] == 0
    assert "ResourceClaimTemplate" in (out / "train.yaml").read_text()
    assert not [n for n in os.listdir(out) if n.startswith(TEMP_PREFIX)]


def test_new_out_is_all_or_nothing(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kubedra.safewrite as sw

    calls = {"n": 0}
    real = sw._write_temp

    def failing(folder: str, text: str, mode: int) -> str:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return real(folder, text, mode)

    monkeypatch.setattr(sw, "_write_temp", failing)
    out = tree / "new" / "out"
    code, _, err = run(str(tree / "apps"), "--out", str(out))
    assert code == 2
    assert "No space left" in err
    assert not out.exists()
    assert not [n for n in os.listdir(tree / "new") if n.startswith(TEMP_PREFIX)]


def test_new_out_files_get_umask_mode(tree: Path) -> None:
    old = os.umask(0o022)
    try:
        assert run(str(tree / "apps"), "--out", str(tree / "out"))[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tree / "out" / "train.yaml").stat().st_mode) == 0o644


def test_in_place_keeps_symlink_mode_and_crlf(tree: Path) -> None:
    real = tree / "apps" / "train.yaml"
    real.write_bytes(DEPLOYMENT.replace("\n", "\r\n").encode())
    real.chmod(0o600)
    link = tree / "link.yaml"
    link.symlink_to(real)
    assert run(str(link), "--in-place")[0] == 0
    assert link.is_symlink()
    data = real.read_bytes()
    assert b"ResourceClaimTemplate" in data
    assert data.count(b"\n") == data.count(b"\r\n"), "every line ends in CRLF"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
