"""``kubedra completion bash|zsh|fish`` prints a script that completes verbs, options and values."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from tests.unit.cli.helpers import run


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nosort -F"),
        ("zsh", "#compdef kubedra"),
        ("fish", "complete --no-files --command kubedra"),
    ],
)
def test_completion_prints_a_script(shell: str, marker: str) -> None:
    r = run("completion", shell)
    assert r.exit_code == 0
    assert marker in r.stdout
    assert "_KUBEDRA_COMPLETE" in r.stdout


def test_unknown_shell_is_a_usage_error() -> None:
    assert run("completion", "tcsh").exit_code == 2


def _complete(words: str) -> list[str]:
    """What the bash script asks kubedra for ``words`` (the protocol the script's function runs)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "_KUBEDRA_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    code = "from kubedra.cli import main; main()"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [line.split(",", 1)[1] for line in out.stdout.splitlines()]


def test_completes_verbs_options_and_versions() -> None:
    assert "migrate" in _complete("kubedra mig")
    assert "--target-version" in _complete("kubedra migrate --tar")
    assert "1.37" in _complete("kubedra audit --target-version 1.3")
