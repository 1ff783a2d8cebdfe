"""The hostile-input suite: every verb that reads files, run on bombs, deep nesting, huge scalars,
odd encodings, duplicate keys, BOMs, CRLF, special files and generated YAML/JSON, each case in its own process
with a time and memory limit. Asserted for every case: exit code 0, 1 or 2; no traceback and no internal
error; an error (exit 2) is one line; nothing outside --out changes; the case finishes within its time limit.

Hypothesis runs derandomized under CI=true, so CI is reproducible; locally it explores new examples."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import cases
from .runner import TIME_LIMIT, Result, run

CI = os.environ.get("CI") == "true"


def tree_state(root: Path, skip: Path) -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == skip or skip in Path(dirpath).parents:
            dirnames[:] = []
            continue
        for name in filenames:
            p = Path(dirpath) / name
            st_ = p.lstat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else ""
            out[str(p.relative_to(root))] = (st_.st_mode, digest)
    return out


def check(result: Result, verb: str) -> None:
    assert result.code in (0, 1, 2), str(result)
    assert result.seconds < TIME_LIMIT, str(result)
    assert "Traceback" not in result.stderr, str(result)
    assert "internal error" not in result.stderr, str(result)
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("kubedra: error:")]
    assert len(errors) <= 1, str(result)
    if result.code == 2:  # said why: one error line, or the verb's report of what it could not read
        assert result.stderr.strip() or verb == "audit", str(result)


def run_verb(verb: str, path: Path, root: Path) -> Result:
    out = root / "out"
    before = tree_state(root, out)
    result = run(cases.VERBS[verb](str(path), str(out)), str(root))
    assert tree_state(root, out) == before, f"files outside --out changed: {result}"
    return result


FIXED = cases.fixed_files()


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fixed_case_every_verb(tmp_path: Path, name: str) -> None:
    path = cases.write_case(str(tmp_path), name, FIXED[name])
    for verb in cases.VERBS:
        check(run_verb(verb, Path(path), tmp_path), verb)


def test_special_files_in_a_folder(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "ok.yaml").write_text(cases.CLAIM)
    os.mkfifo(inputs / "fifo.yaml")  # opening it would block every verb
    (inputs / "loop.yaml").symlink_to(inputs / "loop.yaml")
    (inputs / "dangling.yaml").symlink_to(tmp_path / "gone")
    for verb in cases.VERBS:
        result = run_verb(verb, inputs, tmp_path)
        check(result, verb)
        assert result.code == 2, str(result)


def test_dev_zero_is_refused() -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    result = run(["validate", "/dev/zero"], "/")
    check(result, "validate")
    assert result.code == 2
    assert "larger than" in result.stdout + result.stderr


@settings(
    max_examples=40 if CI else 60,
    derandomize=CI,
    deadline=None,
    database=None if CI else settings.default.database,  # type: ignore[union-attr]  # a profile is always loaded
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(content=cases.documents(), verb=st.sampled_from(sorted(cases.VERBS)))
def test_generated_documents(tmp_path_factory: pytest.TempPathFactory, content: bytes, verb: str) -> None:
    root = tmp_path_factory.mktemp("gen")
    path = cases.write_case(str(root), "in.yaml", content)
    check(run_verb(verb, Path(path), root), verb)
