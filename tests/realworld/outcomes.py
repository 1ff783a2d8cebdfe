"""Outcomes of every verb on the real-world corpus (tests/realworld/inputs), as reviewed expectation files.

The inputs are the files in ``inputs/`` and the files SOURCES.yaml says are kept once, in tests/corpus
(``corpus: PATH``): those are given to the verbs as their upstream text (the corpus copy without the
``# Source:``/``# Note:`` lines above it), under their own name, so lines are the upstream file's
(:func:`inputs`).

For each input ``NAME.yaml`` this records, in ``expected/NAME.yaml``:

- audit: exit code and findings (rule id, line, object) at --target-version 1.37;
- migrate: exit code, manual items, warnings and changes (line, object, path), and the kinds written;
- validate: exit code, verdict, errors (line, object, path) and what was not schema checked;
- simulate: exit code, pods placed/pending per mode on a generated cluster, and the pods and gangs the
  workload model expands the file into; ``live``: per mode, whether the live agreement suite
  (tests/integration/e2e/test_realworld_live.py) finds kube-controller-manager and kube-scheduler placing the
  same pods per workload on the same cluster, or why the file cannot run there (tests/realworld/live.py).

Messages are not recorded (wording may change); every decision is. Usage:

    python scripts/realworld_expect.py            # compare, print differences, exit 1 on any
    python scripts/realworld_expect.py --update   # rewrite expected/ after reviewing the differences
    python scripts/realworld_expect.py NAME...    # only these inputs
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import click
import yaml
from click.testing import CliRunner

from . import live

CORPUS = Path(__file__).resolve().parent
ROOT = CORPUS.parent.parent
INPUTS = CORPUS / "inputs"
EXPECTED = CORPUS / "expected"
SOURCES = CORPUS / "SOURCES.yaml"
TESTS_CORPUS = ROOT / "tests" / "corpus"
CORPUS_HEADER = ("# Source:", "# Note:")  # the lines tests/corpus puts above a file's upstream text
TARGET = "1.37"
NODES = "4x8xH100-80GB"  # the cluster simulate schedules each file on
UPDATE_HINT = "python scripts/realworld_expect.py --update"


@click.command(
    add_help_option=False, context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
@click.pass_context
def _entry(ctx: click.Context) -> None:
    from kubedra import cli

    rv = cli.main(list(ctx.args))  # an exit code, as the console script passes it to sys.exit
    ctx.exit(rv if isinstance(rv, int) else 0)


def _run(args: list[str]) -> tuple[int, Any, str]:
    """The CLI as a user runs it (real exit codes through cli.main), in this process."""
    result = CliRunner().invoke(_entry, args, catch_exceptions=False)
    out = result.stdout
    try:
        data = json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        data = None
    return result.exit_code, data, result.stderr


def _obj(o: dict[str, Any] | None) -> str:
    if not o:
        return "-"
    return f"{o.get('kind')}/{o.get('name')}"


def _line(src: dict[str, Any] | None) -> Any:
    return (src or {}).get("line")


def _no_dirs(text: str) -> str:
    """``text`` without the inputs' directories (a lone clone may live anywhere)."""
    for d in (INPUTS, *{p.parent for p in _from_corpus().values()}):
        text = text.replace(str(d) + "/", "")
    return text.replace("tests/realworld/inputs/", "")


def _stderr_lines(err: str) -> list[str]:
    """Errors on stderr, without the file's directory (a lone clone may live anywhere)."""
    return [_no_dirs(line) for line in err.splitlines() if "error" in line.lower()]


def audit(path: Path) -> dict[str, Any]:
    rc, data, err = _run(["audit", "-o", "json", "--target-version", TARGET, str(path)])
    out: dict[str, Any] = {"exit": rc}
    if data is None:
        out["stderr"] = _stderr_lines(err)
        return out
    out["findings"] = sorted(
        f"{f['rule']} {f['severity']} line {_line(f.get('source'))} {_obj(f.get('object'))}"
        for f in data["findings"]
    )
    if data["summary"].get("notInspected"):
        out["notInspected"] = len(data["summary"]["notInspected"])
    return out


def migrate(path: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        rc, data, err = _run(["migrate", "-o", "json", "--target-version", TARGET, "--out", tmp, str(path)])
        written = sorted(Path(tmp).rglob("*"))
        kinds: list[str] = []
        for w in written:
            if not w.is_file():
                continue
            try:
                docs = list(yaml.safe_load_all(w.read_text()))
            except yaml.YAMLError:
                kinds.append(f"{w.name}: not YAML")
                continue
            kinds += [f"{d.get('apiVersion')} {d.get('kind')}" for d in docs if isinstance(d, dict)]
    out: dict[str, Any] = {"exit": rc}
    if data is None:
        out["stderr"] = _stderr_lines(err)
        return out
    out["manualItems"] = data["manualItems"]
    by_level: dict[str, list[str]] = {}
    for f in data["files"]:
        for x in f["findings"]:
            by_level.setdefault(x["level"], []).append(
                f"line {_line(x.get('source'))} {_obj(x.get('object'))} {x.get('path') or ''}".rstrip()
            )
    for level in sorted(by_level):
        out[level] = sorted(by_level[level])
    out["changed"] = any(f["changed"] for f in data["files"])
    if out["changed"]:
        out["written"] = kinds
    return out


def validate(path: Path) -> dict[str, Any]:
    rc, data, err = _run(["validate", "-o", "json", "--target-version", TARGET, str(path)])
    out: dict[str, Any] = {"exit": rc}
    if data is None:
        out["stderr"] = _stderr_lines(err)
        return out
    out["valid"] = data["valid"]
    out["errors"] = sorted(
        f"line {_line(e.get('source'))} {_obj(e.get('object'))} {e.get('path') or ''}".rstrip()
        for e in data["errors"]
    )
    out["warnings"] = len(data["warnings"])
    if data.get("unreadable"):
        out["unreadable"] = [f"line {_line(u.get('source'))}" for u in data["unreadable"]]
    if data.get("notSchemaChecked"):
        out["notSchemaChecked"] = sorted(data["notSchemaChecked"])
    return out


def _model(path: Path) -> dict[str, Any]:
    """Pods and gangs the shared workload model makes of the file (no scheduling)."""
    from kubedra.errors import InputError
    from kubedra.scheduler.workloads import expand
    from kubedra.simulate.inputs import load_inputs

    try:
        inputs = load_inputs([str(path)])
    except InputError:
        return {}
    try:
        wl = expand(inputs.documents)
    except InputError as e:
        return {"modelError": _no_dirs(str(e))}
    return {
        "pods": sum(len(s.names) for s in wl.sets if not s.existing),
        "gangs": dict(sorted(wl.gangs.items())),
        "skipped": len(wl.skipped) + len(inputs.skipped),
    }


def simulate(path: Path) -> dict[str, Any]:
    rc, data, err = _run(
        ["simulate", "-o", "json", "--nodes", NODES, "--target-version", TARGET, "-f", str(path)]
    )
    out: dict[str, Any] = {"exit": rc, **_model(path)}
    if data is None:
        out["stderr"] = _stderr_lines(err)
        return out
    for mode, res in data["modes"].items():
        out[mode] = {"placed": res["placed"], "pending": res["pending"]}
    return out


def outcome(path: Path) -> dict[str, Any]:
    return {
        "audit": audit(path),
        "migrate": migrate(path),
        "validate": validate(path),
        "simulate": {**simulate(path), "live": live.agreement(path)},
    }


def dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, width=200)


def sources() -> list[dict[str, Any]]:
    return list(yaml.safe_load(SOURCES.read_text())["sources"])


def upstream_text(corpus_file: Path) -> str:
    """A tests/corpus file as its upstream repository has it: without the header lines tests/corpus adds."""
    lines = corpus_file.read_text(encoding="utf-8").splitlines(keepends=True)
    skip = 0
    while skip < len(lines) and lines[skip].startswith(CORPUS_HEADER):
        skip += 1
    return "".join(lines[skip:])


@functools.cache
def _from_corpus() -> dict[str, Path]:
    """The inputs kept in tests/corpus, written (upstream text, own name) to a folder removed at exit."""
    kept = [s for s in sources() if s.get("corpus")]
    if not kept:
        return {}
    folder = Path(tempfile.mkdtemp(prefix="kubedra-realworld-"))
    atexit.register(shutil.rmtree, folder, True)
    out = {}
    for s in kept:
        path = folder / s["file"]
        path.write_text(upstream_text(TESTS_CORPUS / s["corpus"]), encoding="utf-8")
        out[s["file"]] = path
    return out


def inputs(names: list[str] | None = None) -> list[Path]:
    """Every input (``inputs/*.yaml`` and those kept in tests/corpus), by name; only ``names`` when given."""
    files = sorted([*INPUTS.glob("*.yaml"), *_from_corpus().values()], key=lambda p: p.name)
    if names:
        files = [f for f in files if f.stem in names or f.name in names]
    return files


def input_path(stem: str) -> Path:
    """The input named ``stem`` (``NAME`` of ``NAME.yaml``)."""
    (path,) = inputs([stem])
    return path


def main(argv: list[str]) -> int:
    update = "--update" in argv
    names = [a for a in argv if not a.startswith("--")]
    EXPECTED.mkdir(exist_ok=True)
    changed = 0
    for path in inputs(names):
        text = dump(outcome(path))
        exp = EXPECTED / path.name
        old = exp.read_text() if exp.exists() else None
        if old == text:
            continue
        changed += 1
        if update:
            exp.write_text(text)
            print(f"updated {exp.relative_to(ROOT)}")
        else:
            import difflib

            sys.stdout.writelines(
                difflib.unified_diff(
                    (old or "").splitlines(True), text.splitlines(True), f"expected/{path.name}", "actual"
                )
            )
    if changed and not update:
        print(f"\n{changed} outcome(s) changed; review, then: {UPDATE_HINT}")
        return 1
    return 0
