"""One input grammar on every verb that reads manifests, with the exit codes each verb documents.

Every verb below is run with positional PATHs, with ``-f``, with ``-`` (stdin) and with a folder (read
recursively, no ``-R``), and on bad input; the exit code must be the one its ``--help`` documents.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from tests.unit.cli.helpers import (
    ALLOCATE,
    BROKEN,
    DRA_SNAPSHOT,
    FLEET,
    GPU,
    POLICIES,
    WEBHOOK,
    documented_exit_codes,
    run,
    verbs,
)

from kubedra.k8s import versions

# verb words, extra flags, the input, the exit code it must return on that input, stdin/folder supported
CASES = {
    "audit": (["audit"], [], GPU, 0),
    "migrate": (["migrate"], [], GPU, 0),
    "validate": (["validate"], [], GPU, 0),
    "policy test": (["policy", "test"], ["--policy", POLICIES], GPU, 1),
    "policy from-webhook": (["policy", "from-webhook"], [], WEBHOOK, 0),
    "simulate": (["simulate"], ["--nodes", "1x8xH100-80GB"], GPU, 0),
    "allocate": (["allocate"], [], ALLOCATE, 0),
    "explain": (["explain"], ["--claim", "team-b/two-gpus"], ALLOCATE, 0),
}
# verbs that read one file of their own kind (a fleet, a snapshot): positional and -f, no stdin or folder
SINGLE: dict[str, tuple[list[str], list[str], str, int]] = {
    "plan": (["plan"], [], FLEET, 1),
    "verify": (["verify"], [], DRA_SNAPSHOT, 0),
}
ALL = {**CASES, **SINGLE}


def _cmd(name: str):
    return dict(verbs())[name]


@pytest.mark.parametrize("name", sorted(ALL))
@pytest.mark.parametrize("form", ["positional", "-f", "--filename"])
def test_positional_and_filename_mean_the_same(name: str, form: str) -> None:
    words, extra, path, code = ALL[name]
    assert code in documented_exit_codes(_cmd(name))
    args = [path] if form == "positional" else [form, path]
    r = run(*words, *args, *extra)
    assert r.exit_code == code, r.stderr
    assert "No such option" not in r.stderr
    assert "unexpected extra argument" not in r.stderr


@pytest.mark.parametrize("name", sorted(CASES))
def test_stdin_dash(name: str) -> None:
    words, extra, path, code = CASES[name]
    r = run(*words, "-", *extra, input=Path(path).read_text())
    assert r.exit_code == code, r.stderr
    r = run(*words, "-f", "-", *extra, input=Path(path).read_text())
    assert r.exit_code == code, r.stderr


@pytest.mark.parametrize("name", sorted(CASES))
def test_folder_is_read_recursively(name: str, tmp_path: Path) -> None:
    words, extra, path, code = CASES[name]
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    shutil.copy(path, deep / "input.yaml")
    machine = [] if name == "policy from-webhook" else ["-o", "json"]  # it prints policies (YAML)
    r = run(*words, str(tmp_path), *extra, *machine)
    assert r.exit_code == code, r.stderr
    assert json.loads(r.stdout) if machine else yaml.safe_load_all(r.stdout)


@pytest.mark.parametrize("name", sorted(ALL))
def test_bad_input_is_exit_2_with_one_line(name: str, tmp_path: Path) -> None:
    words, extra, _, _ = ALL[name]
    assert 2 in documented_exit_codes(_cmd(name))
    for bad in (BROKEN, str(tmp_path / "missing.yaml")):
        r = run(*words, bad, *extra)
        assert r.exit_code == 2, (bad, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr
        # one line on stderr (audit also reports an unreadable file as an input.malformed finding)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("name", sorted(set(CASES) - {"audit"}))
def test_no_input_is_a_usage_error(name: str) -> None:
    words, extra, _, _ = CASES[name]
    r = run(*words, *extra)
    assert r.exit_code == 2
    assert "PATH" in r.stderr


def test_positional_and_filename_add_up(tmp_path: Path) -> None:
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    text = Path(GPU).read_text()
    one.write_text(text)
    two.write_text(text.replace("name: trainer", "name: other"))
    out = json.loads(run("validate", str(one), "-f", str(two), "-o", "json", code=0).stdout)
    assert out["objects"] == 2


def test_every_verb_documents_its_exit_codes() -> None:
    for name, cmd in verbs():
        codes = documented_exit_codes(cmd)
        assert {0, 2, 3, 130} <= set(codes), name


def test_every_verb_that_takes_filename_also_takes_paths() -> None:
    """One grammar: wherever -f/--filename exists, positional PATHs exist too (same option set)."""
    for name, cmd in verbs():
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        if "-f" in opts:
            assert any(p.name == "paths" for p in cmd.params), name


def test_every_table_verb_takes_wide_json_and_yaml() -> None:
    for name, cmd in verbs():
        output = next((p for p in cmd.params if p.name == "output"), None)
        if output is None:
            continue
        choices = set(getattr(output.type, "choices", ()))
        if "table" in choices:
            assert {"wide", "json", "yaml"} <= choices, name


@pytest.mark.parametrize("name", ["audit", "migrate", "validate", "simulate", "allocate", "explain"])
@pytest.mark.parametrize("version", ["1.99", "1.12", "banana"])
def test_unsupported_target_version_is_a_usage_error(name: str, version: str) -> None:
    words, extra, path, _ = CASES[name]
    r = run(*words, path, *extra, "--target-version", version)
    assert r.exit_code == 2
    assert len(r.stderr.strip().splitlines()) == 1
    if version != "banana":
        assert f"{versions.OLDEST}-{versions.NEWEST}" in r.stderr


def test_partly_known_version_is_a_warning_for_audit() -> None:
    partial = str(versions.Version.parse(versions.NEWEST).plus(1))
    r = run("audit", GPU, "--target-version", partial, "-o", "json")
    assert r.exit_code in (0, 1)
    assert "warning" in r.stderr
    assert partial in r.stderr
    assert "known only partly" in r.stderr
    assert json.loads(r.stdout)["targetVersion"] == partial
    # the modelling verbs do not know it at all
    assert run("migrate", GPU, "--target-version", partial).exit_code == 2


@pytest.mark.parametrize("name", ["audit", "migrate", "validate", "simulate", "allocate", "explain", "plan"])
def test_an_unverified_release_is_supported_and_says_so_once(name: str) -> None:
    """1.38 is modelled from v1.38.0-beta.0 (data/versions.yaml unverified) and tested against that pre-release's
    control plane and allocator (data/versions.yaml testbed): every verb takes it, and says once on stderr that
    it is not yet checked against the 1.38.0 release."""
    release = next((r for r in versions.SUPPORTED if versions.unverified(r)), None)
    if release is None:
        pytest.skip("every supported release is verified")
    words, extra, path, _ = ALL[name]
    r = run(*words, path, *extra, "--target-version", release)
    assert r.exit_code != 2, r.stderr
    line = f"tested against its pre-release {versions.unverified(release)}, not yet against the {release}.0 release"
    if release not in versions.testbed():
        line = f"not yet verified against a {release} control plane"
    assert r.stderr.count(line) == 1, r.stderr


@pytest.mark.parametrize("name", sorted(set(ALL) - {"policy from-webhook"}))  # that one prints YAML only
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_machine_output_is_only_the_artefact(name: str, fmt: str) -> None:
    """stdout parses as the format asked for: notes, warnings and summaries go to stderr."""
    words, extra, path, code = ALL[name]
    r = run(*words, path, *extra, "-o", fmt)
    assert r.exit_code == code, r.stderr
    parsed = json.loads(r.stdout) if fmt == "json" else yaml.safe_load(r.stdout)
    assert parsed is not None


def test_explain_has_output_formats() -> None:
    r = run("explain", ALLOCATE, "--claim", "team-b/two-gpus", "-o", "json", code=0)
    data = json.loads(r.stdout)
    assert data["claim"] == "team-b/two-gpus"
    assert {n["node"] for n in data["nodes"]} == {"node-a", "node-b"}
    text = run("explain", ALLOCATE, "--claim", "team-b/two-gpus", code=0).stdout
    assert "node-a" in text
    assert "{" not in text
