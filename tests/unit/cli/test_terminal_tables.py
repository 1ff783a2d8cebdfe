"""the human tables on a real terminal (a pseudo-terminal whose window size is set with
TIOCSWINSZ, COLUMNS unset) at 80, 120 and 200 columns: no line wider than the terminal unless it is one
unbreakable token (a long path), every finding's whole file:line on screen, nothing cut with an ellipsis,
and a multi-line CEL reason kept inside its row.

Before: audit kept the 75-character WHERE and cut MESSAGE to ~20 characters ("container cuda-cont…") in
175-wide lines; migrate, validate and policy test (rich) cut SOURCE ("tests/corpus/legacy-gpu/device-p…").
"""

from __future__ import annotations

import json
import os
import re
import select
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import kubedra

pty = pytest.importorskip("pty")  # POSIX only
fcntl = pytest.importorskip("fcntl")
termios = pytest.importorskip("termios")

REPO = Path(__file__).resolve().parents[3]
SRC = str(Path(kubedra.__file__).resolve().parents[1])
CORPUS = "tests/corpus/legacy-gpu"  # relative, as a user in the repository would type it
WIDTHS = (80, 120, 200)

POLICY = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-privileged}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["pods"]
  validations:
  - expression: >-
      object.spec.containers.all(c, !has(c.securityContext) ||
      !has(c.securityContext.privileged) || !c.securityContext.privileged)
    message: |-
      privileged containers are not allowed on the GPU nodes of this cluster
      (see the platform team's runbook, section 4)
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-privileged}
spec:
  policyName: no-privileged
  validationActions: [Deny]
"""
PRIVILEGED_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: root, namespace: default}
spec:
  containers:
  - {name: c, image: x, securityContext: {privileged: true}}
"""
# a pod whose claim's CEL selector does not compile: its pending reason is the compiler's three lines
MULTILINE_CEL = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: big, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel:
              expression: |-
                device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200" &&
                device.capacity["gpu.nvidia.com"].memory >= quantity("141Gi")
---
apiVersion: v1
kind: Pod
metadata: {name: cel-pod, namespace: default}
spec:
  resourceClaims: [{name: g, resourceClaimTemplateName: big}]
  containers:
  - {name: c, image: x, resources: {claims: [{name: g}]}}
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, env.get("PYTHONPATH")) if p)
    env["NO_COLOR"] = "1"
    env.setdefault("TERM", "xterm")
    return env


def _terminal(columns: int) -> tuple[int, int]:
    main, side = os.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    return main, side


def on_terminal(args: list[str], columns: int, cwd: Path) -> tuple[str, str]:
    """``python -m kubedra ARGS`` with stdout and stderr each on a terminal ``columns`` wide."""
    out_main, out_side = _terminal(columns)
    err_main, err_side = _terminal(columns)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubedra", *args],
        stdin=subprocess.DEVNULL,
        stdout=out_side,
        stderr=err_side,
        cwd=cwd,
        env=_env(),
        close_fds=True,
    )
    os.close(out_side)
    os.close(err_side)
    got = {out_main: b"", err_main: b""}
    open_ = set(got)
    deadline = time.monotonic() + 120
    try:
        while open_ and time.monotonic() < deadline:
            ready, _, _ = select.select(list(open_), [], [], 1)
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the other side closed
                    chunk = b""
                if chunk:
                    got[fd] += chunk
                else:
                    open_.discard(fd)
    finally:
        if open_:
            proc.kill()
        proc.wait()
        os.close(out_main)
        os.close(err_main)
    assert not open_, f"kubedra {' '.join(args)} did not finish"
    return tuple(got[fd].decode().replace("\r\n", "\n") for fd in (out_main, err_main))  # type: ignore[return-value]


def locations(args: list[str], cwd: Path, skip: tuple[str, ...] = ()) -> set[str]:
    """Every ``file:line`` in the verb's ``-o json`` (read in a pipe), the independent record of findings."""
    res = subprocess.run(
        [sys.executable, "-m", "kubedra", *args, "-o", "json"],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    found: set[str] = set()

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            if isinstance(x.get("file"), str) and isinstance(x.get("line"), int):
                found.add(f"{x['file']}:{x['line']}")
            for k, v in x.items():
                if k not in skip:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(json.loads(res.stdout))
    return found


def check(text: str, columns: int, expected: set[str], *, ignore: str = r"^kubedra: ") -> None:
    lines = [line for line in text.splitlines() if not re.match(ignore, line)]
    too_wide = [line for line in lines if len(line) > columns and len(line.split()) > 1]
    assert not too_wide, f"{columns} columns:\n" + "\n".join(too_wide)
    assert not re.search(r"\S…", text), "a cell was cut with an ellipsis"
    words = {w for line in lines for w in line.split()}
    assert expected, f"file:line missing or cut: {sorted(expected - words)}"
    assert not expected - words, f"file:line missing or cut: {sorted(expected - words)}"


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("verb", [["audit"], ["audit", "-o", "wide"], ["validate"]])
def test_findings_tables_on_a_terminal(verb: list[str], columns: int) -> None:
    out, _ = on_terminal([*verb, CORPUS], columns, REPO)
    check(out, columns, locations([verb[0], CORPUS], REPO))


@pytest.mark.parametrize("columns", WIDTHS)
def test_migrate_change_table_on_a_terminal(columns: int) -> None:
    _, err = on_terminal(
        ["migrate", CORPUS], columns, REPO
    )  # stdout carries the YAML, the table is on stderr
    summary = r"^kubedra: |^\d+ files?, \d+ changed"  # the verb's own summary line is not the table's
    check(err, columns, locations(["migrate", CORPUS], REPO, skip=("validation",)), ignore=summary)


@pytest.mark.parametrize("columns", WIDTHS)
def test_policy_test_table_keeps_a_path_longer_than_the_terminal_whole(tmp_path: Path, columns: int) -> None:
    (tmp_path / "policy.yaml").write_text(POLICY)
    deep = tmp_path / "a-folder-with-a-rather-long-name" / "and-another-one-below-it" / "deeper-still"
    deep.mkdir(parents=True)
    (deep / "privileged-pod.yaml").write_text(PRIVILEGED_POD)
    args = ["policy", "test", "--policy", "policy.yaml", "a-folder-with-a-rather-long-name"]
    out, _ = on_terminal(args, columns, tmp_path)
    where = "a-folder-with-a-rather-long-name/and-another-one-below-it/deeper-still/privileged-pod.yaml:1"
    assert locations(args, tmp_path) == {where}
    check(out, columns, {where})
    message = " ".join(out[out.index("privileged containers") :].split())
    assert message.startswith("privileged containers are not allowed on the GPU nodes of this cluster (see")


@pytest.mark.parametrize("columns", WIDTHS)
def test_simulate_keeps_a_multiline_cel_reason_inside_its_row(tmp_path: Path, columns: int) -> None:
    (tmp_path / "cel.yaml").write_text(MULTILINE_CEL)
    args = ["simulate", "-f", CORPUS, "-f", str(tmp_path / "cel.yaml"), "--nodes", "1x8xH100-80GB"]
    out, _ = on_terminal(args, columns, REPO)
    check(out, columns, locations(args, REPO))
    cel = [line for line in out.splitlines() if 'quantity("141Gi")' in line]
    assert cel, out
    for line in cel:  # the compiler's later lines (" | device...") stay indented in the reason's place
        assert len(line) - len(line.lstrip()) >= 4, line
