"""Cross-verb mutation fuzz: the real manifests under tests/corpus and tests/realworld/inputs (and a kubedra
snapshot, and a fleet file), one structural mutation at a time (``mutations.py``: a value's type changed,
numbers as strings, huge/zero/negative counts, empty strings, unicode/NUL/control characters in names, deep
nesting, wide aliases, duplicated keys, non-UTF-8 bytes, a BOM, a truncated file, a JSON List wrapper), each
run through every verb that reads files, as a user runs it (``kubedra.cli.main``, forked with a time and
memory limit: ``tests/hostile/runner.py``).

Asserted for every run:

- the exit code is one the verb's ``--help`` documents, never 3 (internal error: a bug in kubedra), and
  stderr holds no traceback;
- at most one ``kubedra: error:`` line;
- exit 2: something on stderr says why, and stdout is empty (the product rule: one line, exit 2, nothing
  written), except where a verb documents exit 2 *with* its report (``REPORT_ON_2``): audit reports an
  unparsable file as an ``input.malformed`` finding in its report (stderr's one error line points there);
  validate validates every other object and reports each parse error with file:line; simulate prints its
  report when a GPU node has no DRA view (incomplete); policy test prints its verdicts when an object's
  Namespace is not among the inputs (undecided); verify and plan print their checks or plan when a snapshot
  lists reads that were not made (incomplete);
- nothing is written outside ``migrate --out``'s folder, and on exit 2 nothing at all (no --out folder, the
  --in-place file unchanged);
- the run ends within the runner's time limit and memory headroom (killed otherwise: a code never documented).

Exit 1 on a mutated manifest is a right answer (the mutation made it invalid, or a claim unsatisfiable).

The default (120 examples, derandomized: the same examples every run) takes about 30 s on a loaded 2-core
machine. ``KUBEDRA_FUZZ_EXAMPLES=N`` runs N examples, randomized unless CI=true (a run costs about 0.1 s; a
few thousand make a local sweep): ``KUBEDRA_FUZZ_EXAMPLES=3000 pytest -q tests/unit/cli/test_mutation_fuzz.py``.
A failure names the seed file, the mutation and the verb."""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
from functools import cache
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hostile.runner import run as run_isolated

from kubedra.testing.cli import run as run_inline

from . import mutations

EXAMPLES = int(os.environ.get("KUBEDRA_FUZZ_EXAMPLES") or 120)
TIME_LIMIT = 20  # seconds per run, on a loaded 2-core machine; a healthy run takes well under 1 s

MANIFEST_VERBS = [
    "audit",
    "migrate",
    "migrate --in-place",
    "validate",
    "policy test",
    "simulate",
    "allocate",
    "explain",
]
SNAPSHOT_VERBS = ["verify", "plan", "audit"]
FLEET_VERBS = ["plan"]


@cache
def documented_codes(verb: str) -> frozenset[int]:
    """The exit codes ``kubedra VERB --help`` lists, without 3 (a bug), 130 and 141 (signals)."""
    text = run_inline(*verb.split()[: 2 if verb.startswith("policy") else 1], "--help", code=0).output
    codes = {int(m) for m in re.findall(r"^\s+(\d+)\s", text.split("Exit codes:")[1], re.M)}
    return frozenset(codes - {3, 130, 141})


@cache
def policy_text() -> str:
    return run_inline("policy", "generate", code=0).stdout


def first_claim(data: bytes) -> str:
    """NAMESPACE/NAME of the seed's first ResourceClaim, for explain --claim."""
    try:
        for doc in yaml.safe_load_all(data.decode("utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == "ResourceClaim":
                meta = doc.get("metadata") or {}
                return f"{meta.get('namespace', 'default')}/{meta.get('name')}"
    except (yaml.YAMLError, UnicodeDecodeError):
        pass
    return "default/c"


def argv(verb: str, path: str, root: Path, claim: str) -> list[str]:
    out = str(root / "out")
    return {
        "audit": ["audit", path],
        "migrate": ["migrate", path, "--out", out],
        "migrate --in-place": ["migrate", "--in-place", path],
        "validate": ["validate", path],
        "policy test": ["policy", "test", path, "--policy", str(root / "policy.yaml")],
        "simulate": ["simulate", path, "--nodes", "1x8xH100-80GB"],
        "allocate": ["allocate", path],
        "explain": ["explain", "-f", path, "--claim", claim],
        "verify": ["verify", "-f", path],
        "plan": ["plan", "-f", path],
    }[verb]


def tree(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


# exit 2 with the verb's report on stdout, and no error line: documented in each verb's --help (see above)
REPORT_ON_2 = {"audit", "validate", "simulate", "policy test", "plan", "verify"}


def problems(seed: str, data: bytes, verb: str, root: Path) -> list[str]:
    """Run ``verb`` on ``data`` (a mutated ``seed``) in ``root``; what broke the rules, if anything."""
    (root / "policy.yaml").write_text(policy_text())
    claim = first_claim(Path(seed).read_bytes()) if seed != "fleet" else "default/c"
    if seed == "fleet":  # the fleet file is mutated; its snapshot is not
        shutil.copy(mutations.SNAPSHOT, root / "snap.yaml")
        (root / "fleet.yaml").write_bytes(data)
        path = root / "fleet.yaml"
    elif seed == str(mutations.SNAPSHOT):
        (root / "snap.yaml").write_bytes(data)
        (root / "fleet.yaml").write_text(mutations.FLEET_TEXT)
        path = root / ("fleet.yaml" if verb == "plan" else "snap.yaml")
    else:
        path = root / ("in.json" if data.lstrip().startswith((b"{", b"[")) else "in.yaml")
        path.write_bytes(data)
    before = tree(root)
    result = run_isolated(argv(verb, str(path), root, claim), str(root), time_limit=TIME_LIMIT)
    after = tree(root)
    found: list[str] = []
    if result.code not in documented_codes(verb):
        found.append(f"exit {result.code}, not one {verb} documents ({sorted(documented_codes(verb))})")
    if "Traceback" in result.stderr or "internal error" in result.stderr:
        found.append("traceback or internal error on stderr")
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("kubedra: error:")]
    if len(errors) > 1:
        found.append(f"{len(errors)} error lines")
    if result.code == 2:
        if not result.stderr.strip():
            found.append("exit 2 with nothing on stderr")
        if verb not in REPORT_ON_2 and result.stdout.strip():
            found.append(f"exit 2 with {len(result.stdout)} characters on stdout")
        if after != before:
            found.append("exit 2 and files written or changed")
    else:
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        allowed = {k for k in changed if k == "out" or k.startswith("out/")}
        if verb == "migrate --in-place":
            allowed.add(path.name)
        if changed - allowed:
            found.append(f"files written outside --out: {sorted(changed - allowed)}")
    if found:
        found.append(f"{result}\nstdout: {result.stdout[:500]}")
    return found


def seeds() -> list[tuple[str, tuple[str, ...]]]:
    out = [(str(p), tuple(MANIFEST_VERBS)) for p in mutations.manifest_seeds()]
    out += [(str(mutations.SNAPSHOT), tuple(SNAPSHOT_VERBS)), ("fleet", tuple(FLEET_VERBS))]
    return out


def seed_bytes(seed: str) -> bytes:
    return mutations.FLEET_TEXT.encode() if seed == "fleet" else Path(seed).read_bytes()


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str, str, int]:
    """(seed, mutation, verb, random seed): the snapshot and the fleet file are one seed each against about
    a hundred manifests, so they are drawn a quarter of the time."""
    all_seeds = seeds()
    pool = all_seeds[-2:] if draw(st.integers(0, 3)) == 0 else all_seeds[:-2]
    seed, verbs = draw(st.sampled_from(pool))
    mutation = draw(st.sampled_from(mutations.MUTATIONS))
    return seed, mutation, draw(st.sampled_from(verbs)), draw(st.integers(0, 2**32))


@settings(
    max_examples=EXAMPLES,
    derandomize=os.environ.get("CI") == "true" or "KUBEDRA_FUZZ_EXAMPLES" not in os.environ,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=cases())
def test_one_mutation_every_verb(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str, str, int]
) -> None:
    seed, mutation, verb, rnd_seed = case
    data, label = mutations.mutate(random.Random(rnd_seed), seed_bytes(seed), mutation)
    root = tmp_path_factory.mktemp("mut")
    found = problems(seed, data, verb, root)
    assert not found, f"{verb} on {Path(seed).name} [{mutation}: {label}]:\n" + "\n".join(found)


def test_every_mutation_changes_its_seed() -> None:
    """Each mutation does something to a real manifest (a no-op mutation would be a fuzz that cannot fail)."""
    seed = (mutations.TESTS / "corpus" / "dra" / "nvidia-quickstart-v1-gpu-test1-rct.yaml").read_bytes()
    for mutation in mutations.MUTATIONS:
        changed = [mutations.mutate(random.Random(n), seed, mutation)[0] != seed for n in range(5)]
        assert any(changed), mutation


def test_the_checks_catch_a_crash_output_on_exit_2_and_a_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks are not vacuous: a verb that crashes (exit 3), prints on stdout and exits 2, or writes beside
    its input is reported (the forked run inherits the patched function)."""
    from kubedra.commands import allocate
    from kubedra.errors import InputError

    seed = str(mutations.TESTS / "corpus" / "dra" / "k8s-website-resourceclaim-v1.yaml")
    data = Path(seed).read_bytes()
    roots = {}
    for name in ("ok", "crash", "print", "write"):
        roots[name] = tmp_path / name
        roots[name].mkdir()
    assert problems(seed, data, "allocate", roots["ok"]) == []

    def crash(*_: object) -> None:
        raise RuntimeError("boom")

    def print_then_fail(*_: object) -> None:
        print("half an artefact")
        raise InputError("bad input")

    def write(*_: object) -> None:
        (roots["write"] / "stray.yaml").write_text("x")

    monkeypatch.setattr(allocate, "run", crash)
    found = problems(seed, data, "allocate", roots["crash"])
    assert found[:2] == [
        "exit 3, not one allocate documents ([0, 1, 2])",
        "traceback or internal error on stderr",
    ]
    monkeypatch.setattr(allocate, "run", print_then_fail)
    assert problems(seed, data, "allocate", roots["print"])[0] == "exit 2 with 17 characters on stdout"
    monkeypatch.setattr(allocate, "run", write)
    assert (
        problems(seed, data, "allocate", roots["write"])[0] == "files written outside --out: ['stray.yaml']"
    )
