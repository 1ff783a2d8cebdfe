#!/usr/bin/env python3
"""Regenerate the generated parts of hand-written docs: each lies between a BEGIN and an END marker.

    python scripts/gen_doc_sections.py           # rewrite the stale sections
    python scripts/gen_doc_sections.py --check   # exit 1 and name the stale docs, write nothing

The sections:
- docs/exit-codes.md, the per-verb table: every verb's ``Exit codes:`` block from its ``--help``;
- docs/audit.md, the rules table: every rule of the rule book (src/kubedra/data/rules/audit-rules.yaml);
- docs/architecture.md, the module index: every module under src/kubedra with its docstring's first sentence;
  and its size figure ("about N lines"), rewritten when it is more than 5% off the real count.

tests/unit/test_generated_docs.py fails when a committed doc differs from what this script makes. Tests check
these docs; they never rewrite them.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import yaml

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "kubedra"
RULES = SRC / "data" / "rules" / "audit-rules.yaml"
SIZE_TOLERANCE = 0.05
_SIZE = re.compile(r"`src/kubedra/` \(about ([\d,]+) lines\)")


@dataclass(frozen=True)
class Section:
    doc: str  # path under the repository
    name: str  # the marker's name: <!-- BEGIN name --> ... <!-- END name -->
    render: Callable[[], str]

    @property
    def begin(self) -> str:
        return f"<!-- BEGIN {self.name} -->"

    @property
    def end(self) -> str:
        return f"<!-- END {self.name} -->"


# --------------------------------------------------------------------------- docs/exit-codes.md


def verbs() -> Iterator[tuple[str, click.Command]]:
    """Every command a user can run: ``audit``, ``policy test``, ... (groups expanded)."""
    from kubedra import cli

    def walk(prefix: str, group: click.Group, ctx: click.Context) -> Iterator[tuple[str, click.Command]]:
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if cmd is None:
                raise SystemExit(f"{prefix} {name}: listed but not loadable")
            full = f"{prefix} {name}".strip()
            if isinstance(cmd, click.Group):
                yield from walk(full, cmd, click.Context(cmd, parent=ctx))
            else:
                yield full, cmd

    yield from walk("", cli.cli, click.Context(cli.cli))


def documented_exit_codes(cmd: click.Command) -> dict[int, str]:
    """The ``Exit codes:`` block of a verb's --help epilog."""
    text = cmd.epilog or ""
    if "Exit codes:" not in text:
        raise SystemExit(f"{cmd.name}: no exit codes in --help")
    block = text.split("Exit codes:", 1)[1]
    return {int(m.group(1)): m.group(2).strip() for m in re.finditer(r"^\s+(\d+)\s+(.+)$", block, re.M)}


def exit_code_table() -> str:
    from kubedra.commands._common import SHARED_EXIT_CODES

    lines = ["| verb | code | meaning |", "|---|---|---|"]
    for name, cmd in sorted(verbs()):
        for code, text in documented_exit_codes(cmd).items():
            if code in SHARED_EXIT_CODES:  # the same for every verb: in the table above it
                continue
            lines.append(f"| `kubedra {name}` | {code} | {text.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- docs/audit.md


def rules_table(path: Path = RULES) -> str:
    rules = yaml.safe_load(path.read_text(encoding="utf-8"))["rules"]
    lines = ["| rule | severity | what |", "|---|---|---|"]
    for r in rules:
        title = " ".join(str(r["title"]).split()).replace("|", "/")
        lines.append(f"| [`{r['id']}`](rules/{r['id']}.md) | {r['severity']} | {title} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- docs/architecture.md


def modules(root: Path = SRC) -> Iterator[tuple[str, Path]]:
    """(dotted name, file) for every module and package under ``root``, the package before its modules."""
    for p in sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).with_suffix("").parts):
        parts = p.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(("kubedra", *parts)), p


def summary(path: Path) -> str:
    """The docstring's first sentence (its first paragraph when that has no full stop), on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not doc:
        return ""
    para = " ".join(doc.split("\n\n", 1)[0].split())
    para = re.sub(r":\w+:`[~.]*([^`]+)`", r"`\1`", para).replace("``", "`")  # reST roles and literals
    m = re.match(r"(.+?[.!?])(\s|$)", para)
    return (m.group(1) if m else para).replace("|", "/")


def module_index(root: Path = SRC) -> str:
    lines = ["| module | what it is (its docstring) |", "|---|---|"]
    for name, path in modules(root):
        what = summary(path) or ("the package" if path.name == "__init__.py" else "")
        lines.append(f"| `{name}` | {what} |")
    return "\n".join(lines) + "\n"


def line_count(root: Path = SRC) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in root.rglob("*.py"))


def size_figure_ok(figure: int, actual: int) -> bool:
    return abs(figure - actual) <= SIZE_TOLERANCE * actual


def with_size_figure(text: str, actual: int) -> str:
    """``text`` with its "about N lines" figure rewritten when it is more than 5% off ``actual``."""
    m = _SIZE.search(text)
    if m is None:
        raise SystemExit("docs/architecture.md: no '`src/kubedra/` (about N lines)' figure to check")
    if size_figure_ok(int(m.group(1).replace(",", "")), actual):
        return text
    return text[: m.start(1)] + f"{round(actual, -2):,}" + text[m.end(1) :]


# --------------------------------------------------------------------------- the sections


SECTIONS = (
    Section("docs/exit-codes.md", "generated from --help", exit_code_table),
    Section("docs/audit.md", "generated from the rule book", rules_table),
    Section("docs/architecture.md", "generated module index", module_index),
)
FIXUPS: dict[str, Callable[[str], str]] = {
    "docs/architecture.md": lambda text: with_size_figure(text, line_count()),
}


def replace_section(text: str, section: Section, body: str) -> str:
    if text.count(section.begin) != 1 or text.count(section.end) != 1:
        raise SystemExit(f"{section.doc}: needs exactly one {section.begin} and one {section.end}")
    head, rest = text.split(section.begin, 1)
    _, tail = rest.split(section.end, 1)
    return f"{head}{section.begin}\n{body}{section.end}{tail}"


def render(repo: Path = REPO) -> dict[str, str]:
    """Doc path -> its text with every generated part made afresh."""
    out: dict[str, str] = {}
    for s in SECTIONS:
        text = out.get(s.doc) or (repo / s.doc).read_text(encoding="utf-8")
        out[s.doc] = replace_section(text, s, s.render())
    for doc, fix in FIXUPS.items():
        out[doc] = fix(out.get(doc) or (repo / doc).read_text(encoding="utf-8"))
    return out


def stale(docs: dict[str, str], repo: Path = REPO) -> list[str]:
    return sorted(d for d, text in docs.items() if (repo / d).read_text(encoding="utf-8") != text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a doc is stale; write nothing")
    args = parser.parse_args(argv)
    docs = render()
    changed = stale(docs)
    if args.check:
        for d in changed:
            print(f"{d} is stale: run python scripts/gen_doc_sections.py", file=sys.stderr)
        return 1 if changed else 0
    for d in changed:
        (REPO / d).write_text(docs[d], encoding="utf-8")
    print(f"{len(docs)} docs, {len(changed)} rewritten: {', '.join(changed) or 'none'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
