"""Unrendered Helm templates are named as templates, not as malformed files, by every verb that reads files.

The commonest Helm line, ``name: {{ include "chart.fullname" . }}``, is valid YAML (a flow mapping whose key is a
flow mapping), so only building the object fails; before, audit and validate called it malformed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli import cli
from kubedra.sources.files import parse_text, template_line

INCLUDE = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include "x.fullname" . }}\ndata: {}\n'
VALUE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  replicas: {{ .Values.replicas }}\n"
QUOTED = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  tpl: "{{ .Values.x }}"\n'
FLOW = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, labels: {a: b}}\ndata: {}\n"


@pytest.mark.parametrize(("text", "line"), [(INCLUDE, 4), (VALUE, 6)])
def test_valid_yaml_with_an_unquoted_template_expression_is_a_template(text: str, line: int) -> None:
    assert template_line("t.yaml", text) == line
    (err,) = parse_text(text, "t.yaml").errors
    assert "Helm template" in err.message
    assert err.location is not None
    assert err.location.line == line


@pytest.mark.parametrize("text", [QUOTED, FLOW])
def test_a_quoted_expression_or_nested_flow_mappings_are_ordinary_manifests(text: str) -> None:
    assert template_line("t.yaml", text) is None
    assert parse_text(text, "t.yaml").errors == []


@pytest.mark.parametrize(
    ("verb", "code", "word"),
    [("audit", 2, "input.helm-template"), ("validate", 2, "Helm template"), ("migrate", 1, "Helm template")],
)
def test_every_verb_names_the_template(tmp_path: Path, verb: str, code: int, word: str) -> None:
    path = tmp_path / "configmap.yaml"
    path.write_text(INCLUDE)
    result = CliRunner().invoke(cli, [verb, str(path)])
    assert result.exit_code == code, result.output
    assert word in result.output
    assert "malformed" not in result.output
