"""Every ``kubedra ...`` command kubedra prints as advice runs as printed.

Sources: the rule data and other packaged data (fix texts, policy notes, runbook templates), the strings the
code prints (messages, --help; not module docstrings), and what verbs print when run (audit's fix texts with
the file filled in, demo's "Same as:", plan's runbook). Placeholders (FILE, {file}, <workloads>, FLEET.yaml,
{{manifests}}, ...) become real fixtures; commands that need a cluster are parsed (every option and argument
checked, callbacks run), the others are run and must not be usage errors.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from importlib import resources
from pathlib import Path

import click
import pytest
from tests.unit.cli.helpers import DATA, FLEET, GPU, SNAPSHOT, WEBHOOK, run
from tests.unit.source_strings import string_literals

from kubedra import cli
from kubedra.errors import KubedraError
from kubedra.testing import binaries

SRC = Path(cli.__file__).parent
CHART_DIR = str(DATA / "chart")
BACKTICKED = re.compile(r"`(kubedra(?: [^`]*)?)`")
USAGE_MARKERS = ("No such option", "unexpected extra argument", "Missing argument", "requires an argument")
CLUSTER_FLAGS = ("--context", "--cluster", "--kubeconfig", "--all-contexts", "--nvml")


def advertised() -> dict[str, str]:
    """command text -> where it was found."""
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix == ".py":
            texts = [t for _, t in string_literals(path, keep_docstrings_of_commands=True)]
        elif path.suffix in (".yaml", ".yml", ".md", ".j2", ".html"):
            texts = [path.read_text(encoding="utf-8", errors="replace")]
        else:
            continue
        for text in texts:
            for m in BACKTICKED.finditer(text):
                found.setdefault(m.group(1).strip(), str(path.relative_to(SRC)))
    return found


def _substitute(command: str, files: dict[str, str]) -> str:
    out = command
    for placeholder, value in files.items():
        out = out.replace(placeholder, value)
    out = re.sub(r"\{\{\s*kctx_kubedra\s*\}\}", "--context test", out)
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", r"\1", out)


def parse_only(args: list[str]) -> None:
    """Parse like a run would (options, arguments, their callbacks) without running the verb."""
    cmd: click.Command = cli.cli
    ctx = cmd.make_context("kubedra", list(args))
    while isinstance(cmd, click.Group):
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        name, sub, rest = cmd.resolve_command(ctx, rest)
        assert sub is not None, args
        assert name is not None, args
        cmd = sub
        ctx = cmd.make_context(name, rest, parent=ctx)


def check(command: str, where: str, cwd: Path) -> None:
    args = shlex.split(command.split("  #")[0].split(" # ")[0], posix=True)[1:]
    prose = not args or (
        all(not a.startswith("-") for a in args) and len(args) <= 2 and args[0] != "completion"
    )
    needs_cluster = (
        any(a.startswith(CLUSTER_FLAGS) for a in args)
        or args[0] in ("snapshot", "discover")
        or (args[0] == "explain" and any(a.startswith(("pod/", "claim/")) for a in args))  # reads a cluster
    )
    if "--helm-chart" in args and not (os.environ.get("KUBEDRA_HELM") or shutil.which("helm")):
        needs_cluster = True  # needs helm: parsed only where there is none
    if prose or needs_cluster:
        # a verb named in prose (`kubedra audit`, `kubedra policy generate`) must exist; a command for a
        # cluster must parse (options, arguments and their checks) as printed
        try:
            parse_only([*args, "--help"] if prose else args)
        except click.exceptions.Exit:
            pass
        except (click.UsageError, KubedraError) as e:
            pytest.fail(f"{where}: `{command}` does not parse: {e}")
        return
    r = run(*args, input="")
    msg = f"{where}: `{command}` exited {r.exit_code}: {r.stderr}"
    assert not any(m in r.stderr for m in USAGE_MARKERS), msg
    assert r.exit_code != 2, msg


@pytest.fixture
def fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    claim = tmp_path / "claim.yaml"
    shutil.copy(DATA / "v1beta1-claim.yaml", claim)
    deprecations = tmp_path / "deprecations.yaml"
    deprecations.write_text("schemaVersion: 1\nentries: []\n")
    for d in ("manifests", "manifests/dev", "manifests/staging", "manifests/prod"):
        (tmp_path / d).mkdir(exist_ok=True)
        shutil.copy(GPU, tmp_path / d / "app.yaml")
    helm = binaries.find("helm")
    if helm is not None:
        monkeypatch.setenv("KUBEDRA_HELM", str(helm))
    workloads = tmp_path / "workloads.yaml"
    workloads.write_text(resources.files("kubedra.data").joinpath("demo/inference.yaml").read_text())
    return {
        "{file}": str(claim),
        "FILE": str(deprecations),
        "PATH": GPU,
        "FLEET.yaml": FLEET,
        "SNAPSHOT": SNAPSHOT,
        "<workloads>": str(workloads),
        "WEBHOOK": WEBHOOK,
        "CHART": CHART_DIR,
    }


def _expand(command: str) -> list[str]:
    """``kubedra completion bash|zsh|fish`` -> one command per alternative."""
    m = re.search(r"(\S+\|\S+)", command)
    if not m:
        return [command]
    return [command.replace(m.group(1), alt) for alt in m.group(1).split("|")]


def test_there_is_advice_to_check() -> None:
    found = advertised()
    assert "kubedra migrate -f {file}" in found  # the audit rule's fix text
    assert len(found) >= 10


def test_every_advertised_command_runs_as_printed(fixtures: dict[str, str], tmp_path: Path) -> None:
    for command, where in sorted(advertised().items()):
        for one in _expand(_substitute(command, fixtures)):
            check(one, where, tmp_path)


def test_audit_fix_texts_run_as_printed(fixtures: dict[str, str], tmp_path: Path) -> None:
    report = json.loads(run("audit", fixtures["{file}"], "-o", "json", code=0).stdout)
    commands = [c for f in report["findings"] for c in BACKTICKED.findall(f["fix"])]
    assert any(c.startswith("kubedra migrate") for c in commands), report["findings"]
    for command in commands:
        check(command, "audit fix text", tmp_path)
    r = run("migrate", "-f", fixtures["{file}"])
    assert r.exit_code == 0
    assert "resource.k8s.io/v1" in r.stdout


def test_demo_same_as_runs(fixtures: dict[str, str], tmp_path: Path) -> None:
    out = run("demo", code=0).stdout
    line = next(x for x in out.splitlines() if x.startswith("Same as: "))
    command = _substitute(line.removeprefix("Same as: "), fixtures)
    r = run(*shlex.split(command)[1:])
    assert r.exit_code == 0, r.stderr


def test_plan_runbook_commands_run_as_printed(fixtures: dict[str, str], tmp_path: Path) -> None:
    text = run("plan", FLEET, code=1).stdout
    commands = sorted(
        {m.group(0).split("   #")[0].strip() for m in re.finditer(r"^\s*kubedra [^\n`<]+", text, re.M)}
    )
    assert any(c.startswith("kubedra migrate") for c in commands)
    assert any("snapshot" in c for c in commands)
    for command in commands:
        check(command, "plan runbook", tmp_path)


NEXT = re.compile(r"^kubedra: next: [^`]+: `(kubedra [^`]+)`$", re.M)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_next_hints_run_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tour's chain: audit -> migrate the same paths -> validate the --out folder -> simulate it -> explain a
    pending pod. Each verb prints its next step as one stderr line, and that command runs as printed."""
    monkeypatch.chdir(tmp_path)
    legacy, out = str(EXAMPLES / "legacy-gpu"), str(tmp_path / "migrated")
    steps = [
        ("audit", legacy),
        ("migrate", legacy, "--out", out),
        ("validate", out, "--target-version", "1.37"),
        ("simulate", legacy, "--nodes", "2x8xH100-80GB"),
    ]
    printed = []
    for args in steps:
        r = run(*args)
        hints = NEXT.findall(r.stderr)
        assert len(hints) == 1, (args, r.stderr)
        assert "next:" not in r.stdout
        printed.append(hints[0])
    assert [p.split()[1] for p in printed] == ["migrate", "validate", "simulate", "explain"]
    assert printed[0] == f"kubedra migrate {legacy} --target-version 1.37"
    assert printed[1].startswith(f"kubedra validate {out} ")
    check(printed[3], "next: hint", tmp_path)  # explain pod/...: parsed (it reads a cluster)
    for command in printed[:3]:
        # run as printed: on examples/ validate and simulate are incomplete (custom resources without a schema,
        # objects not simulated), exit 2 with their report, which is no usage error
        r = run(*shlex.split(command)[1:])
        assert not any(m in r.stderr for m in USAGE_MARKERS), (command, r.stderr)
        assert "Usage:" not in r.stderr, (command, r.stderr)
        assert r.exit_code in (0, 1) or "incomplete" in r.stderr, (command, r.exit_code, r.stderr)
    # the migrated tree has nothing left for migrate: audit names no migrate step there
    r = run("audit", out)
    assert r.exit_code == 0, r.stderr
    assert "next:" not in r.stderr, r.stderr
    for args in steps[:1] + steps[2:]:  # never with machine-readable output
        r = run(*args, "-o", "json")
        assert "next:" not in r.stderr, args
        assert "next:" not in r.stdout, args


@pytest.mark.parametrize(
    "command",
    [
        "kubedra migrate --no-such-flag x.yaml",
        "kubedra audit --context a --target-version 1.99",
        "kubedra snapshot --context a --nope",
        "kubedra simulate -f",
        "kubedra no-such-verb",
    ],
)
def test_the_check_catches_broken_advice(command: str, tmp_path: Path) -> None:
    with pytest.raises((AssertionError, pytest.fail.Exception, click.UsageError, Exception)):
        check(command, "test", tmp_path)
