"""The README tour and the docs' shell blocks run as printed, with the exit code each page gives beside the command.

Every line of a shell block that shows a ``kubedra`` command is either run (in bash, from a folder that holds the
clone's ``examples/``, one shell per page so ``out=$(mktemp -d)`` carries over) and must end with a comment that
says ``exit N``, or it is in SKIPPED with the reason it cannot run here: it needs a cluster, or a tool that is not
kubedra. Nothing a page runs may write into the clone: what the commands write goes under ``$(mktemp -d)``.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

SHELL = ("sh", "bash", "console", "")
_EXIT = re.compile(r"#.*?\bexit (\d+)\b")
_KUBEDRA = re.compile(r"(?:^|[|;(]\s*|<\()kubedra\b")

CLUSTER = "needs a cluster"
TOOL = "needs a tool other than kubedra"
# command (the line without its comment) -> why it is not run here
SKIPPED: dict[str, str] = {
    "pipx install .": f"{TOOL} (pipx), and installs",
    "kubedra audit --cluster": CLUSTER,
    "kubedra audit --context prod-eu --context prod-us -o markdown": CLUSTER,
    "kubedra audit --context prod-eu --context prod-us -o json": CLUSTER,
    "kubedra audit --all-contexts --fail-on warning -o sarif > audit.sarif": CLUSTER,
    "kubedra audit --helm-chart ./charts/trainer --helm-values prod.yaml": f"{TOOL} (helm) and a chart of yours",
    "helm template my-release ./chart | kubedra migrate - | kubectl apply --dry-run=server -f -": (
        f"{TOOL} (helm, kubectl) and a cluster"
    ),
    "helm template chart/ | kubedra migrate - | kubectl apply -f -": f"{TOOL} (helm, kubectl) and a cluster",
    "helm template inference ./chart | kubedra migrate - | kubectl apply -f -": f"{TOOL} (helm, kubectl) and a cluster",
    "kubedra snapshot --context prod-eu -o prod-eu.yaml": CLUSTER,
    "kubedra snapshot --context prod-eu -o snapshots/prod-eu.yaml": CLUSTER,
    "kubedra audit -f snapshots/prod-eu.yaml": f"{CLUSTER}: reads the snapshot the line above takes",
    "kubedra verify --context prod-eu --baseline prod-eu.yaml --since 30m": CLUSTER,
    "kubedra verify --context prod-eu --baseline snapshots/prod-before-wave-12.yaml --since 30m": CLUSTER,
    "nvidia-smi -q -x | kubedra discover --nvidia-smi-xml - > slices.yaml": f"{TOOL} (nvidia-smi on a GPU node)",
    "nvidia-smi -q -x > node.xml": f"{TOOL} (nvidia-smi on a GPU node)",
    "kubedra discover --nvidia-smi-xml node.xml --node-name gpu-7 > gpu-7.yaml": (
        f"{TOOL}: reads the nvidia-smi output the line above takes"
    ),
    "kubedra discover --nvidia-smi-xml node.xml --mode mig-dynamic --target-version 1.35": (
        f"{TOOL}: reads the nvidia-smi output taken above"
    ),
    "kubedra simulate -f gpu-7.yaml -f workloads/": f"{TOOL}: reads what discover wrote from nvidia-smi",
    "make demo": f"{TOOL} (make), and installs into .venv",
    "kubedra discover --drain-rule gpu-node-3/gpu-5 [--target-version 1.37] | kubectl apply -f -": (
        f"{CLUSTER}: applies to one, and names its node"
    ),
    "kubedra explain pod/NAME -n NAMESPACE [--context C] [--kubeconfig F] [--node N] [-o json]": CLUSTER,
    "kubedra explain claim/NAME -n NAMESPACE [--context C]": CLUSTER,
    "kubedra explain pod/trainer-0 -n team-b --context prod": CLUSTER,
    "kubedra validate manifests/ --server-dry-run --context prod": CLUSTER,
    'kubedra completion zsh > "${fpath[1]}/_kubedra"': f"{TOOL} (zsh), and writes into its configuration",
    "kubedra completion fish > ~/.config/fish/completions/kubedra.fish": (
        f"{TOOL} (fish), and writes into its configuration"
    ),
}


def command_of(line: str) -> str:
    return re.split(r"\s+#\s", line, maxsplit=1)[0].strip()


def blocks(text: str) -> list[str]:
    """The shell code blocks of a Markdown page (fences paired in order, so a ```yaml block is not mistaken for
    the end of another)."""
    found: list[str] = []
    lang: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        fence = line.strip().startswith("```")
        if lang is None and fence:
            lang, body = line.strip()[3:].strip(), []
        elif lang is not None and fence:
            if lang in SHELL:
                found.append("\n".join(body))
            lang = None
        elif lang is not None:
            body.append(line)
    return found


def shell_lines(text: str) -> list[str]:
    """The lines of every shell block that shows a kubedra command or an exit code (continuations joined,
    comments kept)."""
    found: list[str] = []
    for block in blocks(text):
        lines = [x.strip() for x in block.replace("\\\n", " ").splitlines()]
        lines = [x for x in lines if x and not x.startswith("#")]
        if any(_KUBEDRA.search(command_of(x)) or _EXIT.search(x) for x in lines):
            found += lines
    return found


def runnable(page: Path) -> list[tuple[str, int]]:
    """(line, the exit code the page gives) for each line to run; a line neither skipped nor annotated fails."""
    out: list[tuple[str, int]] = []
    bad: list[str] = []
    for line in shell_lines(page.read_text(encoding="utf-8")):
        if command_of(line) in SKIPPED:
            continue
        m = _EXIT.search(line)
        if m is None:
            bad.append(line)
        else:
            out.append((line, int(m.group(1))))
    assert not bad, (
        f"{_rel(page)}: lines with no `# exit N` that are not in SKIPPED (say why they cannot run):\n"
        + "\n".join(bad)
    )
    return out


def _rel(page: Path) -> str:
    return page.relative_to(REPO).as_posix() if page.is_relative_to(REPO) else page.name


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def run_page(page: Path, tmp_path: Path) -> list[tuple[str, int, int, str]]:
    """Run the page's lines in one bash, from a folder holding the clone's examples/; (line, expected, got,
    stderr) each."""
    lines = runnable(page)
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "examples").symlink_to(EXAMPLES, target_is_directory=True)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    errs = tmp_path / "stderr"
    errs.mkdir()
    # set -u: an unset $out stops the page instead of writing under /
    script = ["set -u", 'kubedra() { "$KUBEDRA_PYTHON" -m kubedra "$@"; }', 'exec 3>"$KUBEDRA_RC"']
    for i, (line, _) in enumerate(lines):
        script += [f'{{ {line}\n}} 2>"{errs}/{i}"', f'echo "{i} $?" >&3']
    env = {
        **os.environ,
        "TMPDIR": str(tmp),
        "KUBEDRA_PYTHON": sys.executable,
        "KUBEDRA_RC": str(tmp_path / "rc"),
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        "NO_COLOR": "1",
    }
    before = _tree(EXAMPLES)
    subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=clone,
        env=env,
        stdout=subprocess.DEVNULL,
        check=False,
        timeout=600,
    )
    assert sorted(p.name for p in clone.iterdir()) == ["examples"], f"{page.name} wrote into the clone"
    assert _tree(EXAMPLES) == before, f"{page.name} changed examples/"
    codes = dict(line.split() for line in (tmp_path / "rc").read_text().splitlines())
    return [
        (line, want, int(codes.get(str(i), -1)), (errs / str(i)).read_text()[-600:])
        for i, (line, want) in enumerate(lines)
    ]


@pytest.mark.parametrize(
    "page",
    [
        p
        for p in PAGES
        if any(_KUBEDRA.search(command_of(x)) for x in shell_lines(p.read_text(encoding="utf-8")))
    ],
    ids=lambda p: p.relative_to(REPO).as_posix(),
)
def test_each_command_exits_as_the_page_says(page: Path, tmp_path: Path) -> None:
    wrong = [
        f"`{command_of(line)}`: the page says exit {want}, it exited {got}\n{err}"
        for line, want, got, err in run_page(page, tmp_path)
        if got != want
    ]
    assert not wrong, f"{_rel(page)}:\n" + "\n".join(wrong)


def test_the_tour_runs_commands_and_every_skip_is_shown_somewhere() -> None:
    readme = runnable(REPO / "README.md")
    assert sum(1 for line, _ in readme if "kubedra " in line) >= 10
    assert {code for _, code in readme} >= {0, 1}
    shown = {command_of(x) for p in PAGES for x in shell_lines(p.read_text(encoding="utf-8"))}
    assert not set(SKIPPED) - shown, f"SKIPPED lists lines no page shows: {sorted(set(SKIPPED) - shown)}"
    # a skip says why, and only two reasons are allowed
    assert all(why.startswith((CLUSTER, TOOL)) for why in SKIPPED.values())
    # nothing that needs a cluster is claimed to run
    for page in PAGES:
        for line, _ in runnable(page):
            assert not re.search(r"--(context|cluster|kubeconfig|all-contexts)\b", command_of(line)), line


def test_the_check_sees_a_wrong_exit_code_and_a_write_into_the_clone(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```sh\nkubedra --version   # exit 1\nkubedra audit examples/dra   # exit 1\n```\n")
    (tmp_path / "a").mkdir()
    got = [(want, code) for _, want, code, _ in run_page(page, tmp_path / "a")]
    assert got == [(1, 0), (1, 1)]
    page.write_text("```sh\nkubedra policy generate > policies.yaml   # exit 0\n```\n")
    (tmp_path / "b").mkdir()
    with pytest.raises(AssertionError, match="wrote into the clone"):
        run_page(page, tmp_path / "b")
    page.write_text("```sh\nkubedra audit examples/dra\n```\n")
    with pytest.raises(AssertionError, match="no `# exit N`"):
        runnable(page)


def test_examples_are_the_corpus_files_they_name() -> None:
    """examples/ copies real manifests from tests/corpus (and the plan fleet from tests/unit/plan/data): the
    copies must not drift from what the tests assert on."""
    pairs = [(p, REPO / "tests" / "corpus" / p.relative_to(EXAMPLES)) for p in EXAMPLES.glob("*-gpu/*.yaml")]
    pairs += [(p, REPO / "tests" / "corpus" / "dra" / p.name) for p in (EXAMPLES / "dra").glob("*.yaml")]
    pairs += [
        (p, REPO / "tests" / "unit" / "plan" / "data" / p.name) for p in (EXAMPLES / "fleet").glob("*.yaml")
    ]
    pairs.append(
        (EXAMPLES / "policy" / "webhooks.yaml", REPO / "tests" / "unit" / "cli" / "data" / "webhook.yaml")
    )
    assert len(pairs) >= 30
    drifted = [p.relative_to(REPO).as_posix() for p, src in pairs if p.read_bytes() != src.read_bytes()]
    assert not drifted, drifted
    for p, src in pairs:
        if "corpus" in src.parts:
            assert p.read_text(encoding="utf-8").startswith("# Source: github.com/"), p
