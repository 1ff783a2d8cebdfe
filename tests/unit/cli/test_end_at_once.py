"""A verb that has written everything may end the process without freeing what it built
(``gcpause.nothing_left_to_free``, audit): only when ``cli.main`` runs as the program, with the same output,
stderr and exit code as a normal end; the ``atexit`` functions still run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# an object freed only when the interpreter tears down (held by the sys module, cleared last, and in no cycle,
# so frozen objects do not keep it); an atexit function that must run either way
PRELUDE = (
    "import atexit, os, sys\n"
    "class Freed:\n"
    "    def __del__(self, write=os.write): write(2, b'freed\\n')\n"
    "sys.kubedra_probe = Freed()\n"
    "atexit.register(lambda: sys.stderr.write('atexit\\n'))\n"
    "from kubedra.cli import main\n"
)


def _run(code: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + code, *args], capture_output=True, timeout=120, check=False
    )


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_audit_as_the_program_ends_at_once_with_the_same_output(fmt: str) -> None:
    args = ("audit", str(ROOT / "tests" / "corpus" / "legacy-gpu"), "-o", fmt)
    program = _run("main()", *args)  # argv from sys.argv: the program itself
    called = _run("main(sys.argv[1:])", *args)  # called with argv (as tests do): ends as usual
    assert program.returncode == called.returncode
    assert program.stdout == called.stdout
    assert program.stdout.count(b"gpu.device-plugin-request") > 1
    assert program.stderr.replace(b"atexit\n", b"") == called.stderr.replace(b"atexit\n", b"").replace(
        b"freed\n", b""
    )
    assert program.stderr.endswith(b"atexit\n")
    assert b"freed" not in program.stderr  # nothing torn down
    assert called.stderr.endswith(b"freed\n")


def test_a_verb_that_did_not_say_so_ends_as_usual(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    done = _run("main()", "validate", str(tmp_path / "c.yaml"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith(b"freed\n")
