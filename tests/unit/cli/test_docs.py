"""The documentation stays true to the command line: docs/cli/ is exactly what scripts/gen_cli_docs.py generates
from ``--help``, and every ``kubedra ...`` command shown in README.md and docs/ parses as printed (every verb,
option, choice and value check), the way a user would type it."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path
from types import ModuleType

import click
import pytest
from tests.unit.cli.helpers import verbs
from tests.unit.cli.test_advice import parse_only

from kubedra.errors import KubedraError

REPO = Path(__file__).resolve().parents[3]
DOCS = REPO / "docs"


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_cli_docs", REPO / "scripts" / "gen_cli_docs.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_pages_match_help() -> None:
    gen = _gen()
    stale = gen.stale(gen.render())
    assert not stale, f"docs/cli/ is stale ({', '.join(stale)}): run `python scripts/gen_cli_docs.py`"


def test_every_command_has_a_page_and_the_check_sees_changes(tmp_path: Path) -> None:
    gen = _gen()
    pages = gen.render()
    for name, _ in verbs():
        assert f"kubedra-{name.replace(' ', '-')}.md" in pages, name
    for name, text in pages.items():
        (tmp_path / name).write_text(text)
    assert gen.stale(pages, tmp_path) == []
    (tmp_path / "kubedra-audit.md").write_text("edited by hand\n")
    (tmp_path / "kubedra-gone.md").write_text("a page for a removed verb\n")
    assert gen.stale(pages, tmp_path) == ["kubedra-audit.md", "kubedra-gone.md"]


def _documents() -> list[Path]:
    pages = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
    return [p for p in pages if p.is_file()]


_FENCE = re.compile(r"^```(?:sh|bash|console)?\n(.*?)^```", re.M | re.S)
_INLINE = re.compile(r"`(kubedra [^`]+)`")


def shown_commands(text: str) -> list[str]:
    """``kubedra ...`` commands of the shell blocks (each stage of a pipeline, comments and redirections cut)
    and of inline code in prose."""
    found: list[str] = []
    for block in _FENCE.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.split(r"\s#\s|\s{2,}#", line)[0].strip()
            for stage in line.split("|"):
                stage = re.sub(r"\s[12]?>\s*\S+", "", stage).strip()
                if stage.startswith("kubedra ") and "<(" not in stage:
                    found.append(stage)
                elif "<(kubedra " in stage:
                    found.append(stage.split("<(", 1)[1].rstrip(")"))
    found += _INLINE.findall(_FENCE.sub("", text))
    # `[--flag value]` marks an optional part in prose: check it with the part
    return [re.sub(r"\[([^\]]*)\]", r"\1", c) for c in found if "..." not in c.split()]


def test_the_extraction_finds_commands() -> None:
    text = (
        "Run `kubedra audit --list-rules` or `kubedra ...`, `kubedra plan [-o json]`.\n"
        "```sh\nhelm template c | kubedra migrate - | kubectl apply -f -\n"
        "kubedra policy generate --only a \\\n  --actions Deny > p.yaml   # enforce\n```\n"
    )
    assert shown_commands(text) == [
        "kubedra migrate -",
        "kubedra policy generate --only a    --actions Deny",
        "kubedra audit --list-rules",
        "kubedra plan -o json",
    ]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(shown_commands(readme)) >= 10


@pytest.mark.parametrize("page", _documents(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_command_shown_parses_as_printed(page: Path) -> None:
    bad = []
    for command in shown_commands(page.read_text(encoding="utf-8")):
        args = shlex.split(command)[1:]
        prose = all(not a.startswith("-") for a in args) and len(args) <= 2
        try:
            parse_only([*args, "--help"] if prose else args)
        except click.exceptions.Exit:
            pass
        except (click.UsageError, KubedraError) as e:
            bad.append(f"`{command}`: {e}")
    assert not bad, f"{page.relative_to(REPO)}: commands that do not parse as printed:\n" + "\n".join(bad)
