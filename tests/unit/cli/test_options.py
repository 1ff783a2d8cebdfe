"""Every verb parses its flags into one frozen options dataclass (kubectl's Options/Complete/Validate/Run):
the shared ones in ``common`` (kubedra.commands._common.CommonOptions), then ``run(options)`` does the work."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any

import pytest
from tests.unit.cli.helpers import run

from kubedra.commands._common import CommonOptions
from kubedra.k8s.versions import DEFAULT_TARGET

# module -> (options class, run function) of every verb
VERBS = {
    "allocate": ("AllocateOptions", "run"),
    "audit": ("AuditOptions", "run"),
    "demo": ("DemoOptions", "run"),
    "discover": ("DiscoverOptions", "run"),
    "explain": ("ExplainOptions", "run"),
    "migrate": ("MigrateCommandOptions", "run"),
    "plan": ("PlanOptions", "run"),
    "policy": ("PolicyGenerateOptions", "run_generate"),
    "simulate": ("SimulateCommandOptions", "run"),
    "snapshot": ("SnapshotOptions", "run"),
    "validate": ("ValidateOptions", "run"),
    "verify": ("VerifyOptions", "run"),
}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_each_verb_has_a_frozen_options_dataclass_with_the_common_options(verb: str) -> None:
    module = importlib.import_module(f"kubedra.commands.{verb}")
    cls = getattr(module, VERBS[verb][0])
    assert dataclasses.is_dataclass(cls)
    assert cls.__dataclass_params__.frozen  # type: ignore[union-attr]  # a dataclass, asserted above
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert fields["common"].type in ("CommonOptions", CommonOptions)
    assert callable(getattr(module, VERBS[verb][1]))


def _captured(monkeypatch: pytest.MonkeyPatch, verb: str, *args: str) -> Any:
    """The options ``kubedra VERB ARGS`` hands to its run function (which is not run)."""
    module = importlib.import_module(f"kubedra.commands.{verb}")
    seen: list[Any] = []
    monkeypatch.setattr(module, VERBS[verb][1], seen.append)
    r = run(verb, *args)
    assert r.exit_code == 0, r.output
    (options,) = seen
    return options


def test_complete_merges_paths_and_filename_and_takes_the_shared_flags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    o = _captured(
        monkeypatch,
        "audit",
        "a.yaml",
        "-f",
        "b.yaml",
        "--context",
        "eu",
        "--context",
        "us",
        "-o",
        "json",
        "--ignore",
        "webhook.*",
    )
    assert o.common == CommonOptions(
        files=("a.yaml", "b.yaml"), output="json", target_version=DEFAULT_TARGET, contexts=("eu", "us")
    )
    assert o.ignore_rules == ("webhook.*",)
    assert o.live
    assert o.fail_on == "error"
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.fail_on = "none"

    v = _captured(monkeypatch, "validate", "x.yaml", "--server-dry-run", "--context", "prod")
    assert v.common.context == "prod"
    assert v.common.contexts == ("prod",)
    assert v.server_dry_run


def test_use_case_options_are_built_from_the_command_options(monkeypatch: pytest.MonkeyPatch) -> None:
    m = _captured(monkeypatch, "migrate", "x.yaml", "--sharing", "mig:1g.10gb", "--prefer", "H100, A100")
    engine = m.engine_options()
    assert engine.sharing.profile == "1g.10gb"
    assert engine.prefer == ("H100", "A100")
    assert engine.gang
    assert engine.target_version == m.common.target_version
