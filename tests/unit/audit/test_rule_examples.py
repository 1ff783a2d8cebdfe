"""Every audit rule's bad example (data/rules/audit-rules.yaml `example.bad`) makes `kubedra audit` report that
rule, and its good example does not: the examples on the rule pages (docs/rules/, scripts/gen_rule_docs.py) are
checked against the real checks, not just written next to them."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.sources.helm import find_helm
from kubedra.testing.require import unavailable

from .helpers import REPO, run

RULES: list[dict[str, Any]] = yaml.safe_load(
    (REPO / "src/kubedra/data/rules/audit-rules.yaml").read_text(encoding="utf-8")
)["rules"]
NEEDS_HELM = {"input.helm-render-failed"}


def _write(tmp: Path, side: str, content: str | dict[str, str]) -> Path:
    """A bad/good example on disk: one YAML file, or a folder (a chart) for a mapping of file names to text."""
    if isinstance(content, str):
        path = tmp / f"{side}.yaml"
        path.write_text(content, encoding="utf-8")
        return path
    folder = tmp / side
    for name, text in content.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


UNREAD = {"input.malformed", "input.helm-template", "input.helm-render-failed", "cluster.unreachable"}


def audit_rules(example: dict[str, Any], side: str, tmp: Path) -> set[str]:
    """The rule ids `kubedra audit` reports for one side of an example, with the example's arguments."""
    path = _write(tmp, side, example[side])
    args = example.get(f"{side}_args", example.get("args", ["{path}"]))
    if "{path}" not in args:
        args = [*args, "{path}"]
    r = run("audit", *[a.replace("{path}", str(path)) for a in args], "-o", "json", "--fail-on", "none")
    data = json.loads(r.stdout)
    rules = {f["rule"] for f in data["findings"]}
    # --fail-on none: 0, unless an input or a cluster was not read or the report is incomplete (2)
    assert r.exit_code == (2 if rules & UNREAD or data.get("incomplete") else 0), r.output
    return rules


def test_every_rule_has_a_description_and_both_examples() -> None:
    for rule in RULES:
        ex = rule.get("example")
        assert rule.get("description"), rule["id"]
        assert isinstance(ex, dict), rule["id"]
        assert ex.get("bad"), rule["id"]
        assert ex.get("good"), rule["id"]
        assert set(ex) <= {"bad", "good", "args", "bad_args", "good_args"}, rule["id"]


@pytest.mark.parametrize("rule", RULES, ids=[r["id"] for r in RULES])
def test_bad_example_fires_and_good_example_does_not(rule: dict[str, Any], tmp_path: Path) -> None:
    if rule["id"] in NEEDS_HELM and find_helm() is None:
        unavailable("needs the helm binary (`make testbed` builds it; or install helm, or set KUBEDRA_HELM)")
    example = rule["example"]
    assert rule["id"] in audit_rules(example, "bad", tmp_path), "the bad example does not fire the rule"
    assert rule["id"] not in audit_rules(example, "good", tmp_path), "the good example fires the rule"


NEXT_MIGRATE = re.compile(r"^kubedra: next: [^`]+: `(kubedra migrate [^`]+)`$", re.M)
SUMMARY = re.compile(r"(\d+) changed, (\d+) new objects?")


def _audit_table(example: dict[str, Any], tmp: Path) -> tuple[Path, str]:
    """Audit the bad example as a person does (the table): its path and what stderr said."""
    path = _write(tmp, "bad", example["bad"])
    args = example.get("bad_args", example.get("args", ["{path}"]))
    if "{path}" not in args:
        args = [*args, "{path}"]
    return path, run("audit", *[a.replace("{path}", str(path)) for a in args]).stderr


def _migrate_changes(args: list[str]) -> int:
    """How many files and new objects `kubedra migrate ARGS` writes (its stderr summary); 0: nothing to do."""
    r = run("migrate", *args)
    if r.exit_code == 2:  # input migrate refuses (a file that does not parse): nothing rewritten
        assert "Usage:" not in r.stderr, r.stderr
        return 0
    assert r.exit_code in (0, 1), (args, r.exit_code, r.stderr)  # 1: manual items left
    m = SUMMARY.search(r.stderr)
    assert m, (args, r.stderr)
    return int(m.group(1)) + int(m.group(2))


@pytest.mark.parametrize("rule", RULES, ids=[r["id"] for r in RULES])
def test_next_hint_names_migrate_only_when_migrate_has_work(rule: dict[str, Any], tmp_path: Path) -> None:
    """audit's `next:` hint suggests `kubedra migrate` after a finding migrate fixes, never otherwise: the printed
    command runs as printed and rewrites something, and where no hint is printed migrate has nothing to rewrite."""
    example = rule["example"]
    if not isinstance(example["bad"], str):
        return  # a chart: audit suggests nothing for --helm-chart input
    path, stderr = _audit_table(example, tmp_path)
    hints = NEXT_MIGRATE.findall(stderr)
    args = example.get("bad_args", example.get("args", []))
    target = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "--target-version"), None)
    if hints:
        assert _migrate_changes(shlex.split(hints[0])[2:]) > 0, hints[0]
    else:
        assert rule.get("migrate") is not True, (rule["id"], stderr)
        same = [str(path), *(["--target-version", target] if target else [])]
        assert _migrate_changes(same) == 0, rule["id"]
