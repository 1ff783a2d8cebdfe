"""Comments, docs and data cite upstream sources (a repository's path at a tag) or files in this repository,
never notes that live outside it, nor "issue 12 #4" of a tracker that is not part of it: a reader of a clone has no ``../shared``, so "see dra-reference.md §4" sends
them nowhere. The facts such notes collect are cited from where they come from."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("src", "tests", "scripts", "benchmarks", "docs", "deploy", "testbed", ".ci")
TOP_FILES = ("README.md", "SECURITY.md", "Makefile", "Dockerfile", "pyproject.toml")
TEXT = {".py", ".md", ".yaml", ".yml", ".toml", ".go", ".sh", ".j2", ".txt", ".json", ".tpl", ".mod", ""}
SKIP_DIRS = {"__pycache__", ".cache", "node_modules", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
# Third-party files copied in with their own provenance (tests/corpus is a copy of public manifests).
SKIP_UNDER = ("tests/corpus/",)
# Names of the development checkout's notes beside the repository, and the folder itself.
OUTSIDE = re.compile(
    r"dra-reference\.md|python-stack\.md|gpu-and-performance\.md|field-\d{4}-\d{2}\.md|peers\.md"
    r"|shared/reference|shared reference|reference notes"
)
# ../shared/peers is a build input (make testbed builds peers such as pluto from it when present) and
# ../shared/corpus the source tests/corpus was copied from: both are named where they are used.
SHARED = re.compile(r"\.\./shared\b(?!/(?:peers|corpus)\b)")
# "issue 12 #4" points into a tracker that is not part of the repository: a test says what behaviour it pins.
TRACKER = re.compile(r"\b[Ii]ssues? #?\d+")
TRACKER_FREE = ("src/", "tests/", "scripts/", "testbed/")
# The one test that compares tests/corpus with ../shared/corpus where it exists, and the docs that explain it.
# Where ../shared may not be named at all: code and its comments. The Makefile, testbed and .ci describe the
# checkout's layout (what CI links beside a fresh clone), which is not a citation.
SHARED_CHECKED = ("src/", "tests/", "scripts/", "benchmarks/")
SHARED_ALLOWED = {
    "tests/unit/test_shared_corpus.py",
    "tests/unit/test_no_outside_references.py",
    "docs/development.md",
    "docs/realworld-corpus.md",
    ".ci/run",
}


def _files() -> list[Path]:
    out = [REPO / f for f in TOP_FILES if (REPO / f).is_file()]
    for root in ROOTS:
        for p in sorted((REPO / root).rglob("*")):
            rel = p.relative_to(REPO).as_posix()
            if not p.is_file() or SKIP_DIRS & set(p.parts) or rel.startswith(SKIP_UNDER):
                continue
            if p.suffix in TEXT:
                out.append(p)
    return out


def outside_references(path: Path, rel: str) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        if rel == "tests/unit/test_no_outside_references.py":
            break
        tracker = TRACKER.search(line) and rel.startswith(TRACKER_FREE)
        shared = SHARED.search(line) and rel.startswith(SHARED_CHECKED) and rel not in SHARED_ALLOWED
        if OUTSIDE.search(line) or shared or tracker:
            found.append(f"{rel}:{n}: {line.strip()[:120]}")
    return found


def test_nothing_cites_files_outside_the_repository() -> None:
    files = _files()
    assert len(files) > 500, "the walk found too few files to mean anything"
    bad = [hit for p in files for hit in outside_references(p, p.relative_to(REPO).as_posix())]
    assert not bad, (
        "cite the upstream source (repository, path, tag) or a file in this repository:\n" + "\n".join(bad)
    )


def test_the_check_sees_an_outside_reference(tmp_path: Path) -> None:
    p = tmp_path / "x.py"
    p.write_text(
        '"""The algorithm (see dra-reference.md §4)."""\n# from ../shared/reference\n# issue 12 #4\n'
    )
    assert len(outside_references(p, "src/kubedra/x.py")) == 3
    p.write_text("# kubernetes pkg/apis/resource/validation/validation.go at kubernetes-1.36.0\n")
    assert outside_references(p, "src/kubedra/x.py") == []
