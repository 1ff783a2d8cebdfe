"""kubedra's side of the checked-in Pluto comparison (tests/integration/audit/pluto-differences.yaml): every
API-version verdict on the corpus is either one where the two tools agree or a listed, explained difference."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from .helpers import REPO, corpus, run

EXPECTED = yaml.safe_load((REPO / "tests" / "integration" / "audit" / "pluto-differences.yaml").read_text())
API_RULES = {"api.removed", "api.deprecated", "api.not-yet-served", "dra.classic"}


def test_kubedra_side_of_every_listed_difference() -> None:
    root = corpus()
    # exit 1: API findings are errors (the corpus's two Helm templates are reported, not read: no exit 2)
    r = run("audit", str(root), "-o", "json", "--target-version", EXPECTED["target"], code=1)
    report = json.loads(r.stdout)
    got = {}
    for f in report["findings"]:
        if f["rule"] in API_RULES:
            rel = Path(f["source"]["file"]).relative_to(root).as_posix()
            got[(rel, f["object"]["kind"], f["object"]["name"])] = f
    listed = {(d["file"], d["kind"], d["name"]): d for d in EXPECTED["differences"]}
    # Pluto agrees with none of kubedra's API findings on this corpus: all of them are listed differences
    assert set(got) == set(listed)
    for key, d in listed.items():
        f = got[key]
        assert f["rule"] == d["kubedra"]["rule"], key
        assert f["object"]["apiVersion"] == d["apiVersion"], key
        if "replacement" in d["kubedra"]:
            assert d["kubedra"]["replacement"] + " " in f["fix"], (key, f["fix"])
    by_rule = report["summary"]["byRule"]
    for rule, count in EXPECTED["kubedraOnlyRules"].items():
        assert by_rule.get(rule) == count, rule
