"""Small hostile-input cases: a closed stdout is exit 141 (the artefact was not delivered) without noise; bad
input of every odd shape is exit 2 with one line (deep nesting, huge integers, malformed kubeconfig,
--html into a missing folder); multi-line messages are joined into one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kubedra.cli import _one_line
from kubedra.errors import EXIT_BROKEN_PIPE

CLAIM = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec: {}\n"


def kubedra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubedra", *args], capture_output=True, text=True, timeout=120, check=False
    )


# audit on tests/corpus also ends the process at once after writing (gcpause.nothing_left_to_free): a closed
# stdout must still be 141 and quiet there.
@pytest.mark.parametrize("verb", ["validate", "audit"])
def test_closed_stdout_is_141_and_quiet(tmp_path: Path, verb: str) -> None:
    (tmp_path / "c.yaml").write_text(CLAIM)
    target = (
        tmp_path / "c.yaml"
        if verb == "validate"
        else Path(__file__).resolve().parents[3] / "tests" / "corpus"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubedra", verb, "-o", "json", str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE
    assert b"Traceback" not in err
    assert b"Exception ignored" not in err


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 5000 + "]" * 5000 + "\n",
        "kind: X\nmetadata: {name: " + "9" * 5000 + "}\n",
        "kind: X\nv: .nan\n",
        "a: &a [*a, *a]\n",
    ],
    ids=["deep", "digits", "nan", "recursive"],
)
def test_odd_yaml_is_one_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "x.yaml").write_text(text)
    proc = kubedra("validate", str(tmp_path / "x.yaml"))
    assert proc.returncode in (1, 2)
    assert "Traceback" not in proc.stderr
    if proc.returncode == 2:
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize(
    "kubeconfig", ["apiVersion: v1\nclusters: [\n", "clusters: 5\ncontexts: {a: 1}\n", "a: &a [*a]\n"]
)
def test_malformed_kubeconfig_is_exit_2_one_line(tmp_path: Path, kubeconfig: str) -> None:
    (tmp_path / "kc").write_text(kubeconfig)
    proc = kubedra("snapshot", "--kubeconfig", str(tmp_path / "kc"), "-o", str(tmp_path / "s.yaml"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "kubeconfig" in proc.stderr
    assert not (tmp_path / "s.yaml").exists()


def test_html_into_missing_folder(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CLAIM)
    proc = kubedra("audit", str(tmp_path / "c.yaml"), "--html", str(tmp_path / "nope" / "r.html"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("kubedra: error:")
    assert "does not exist" in proc.stderr


def test_one_line() -> None:
    assert _one_line("HTTP 403\n\n  Forbidden\nbody") == "HTTP 403; Forbidden; body"
