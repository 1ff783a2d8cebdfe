"""RuleMeta.render_fix caches the rendered fix per rule and the str values it reads: what comes out must be what
formatting the template gives, for every rule, with values of any type, absent ones, and after the cache is hit."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.audit import model
from kubedra.audit.model import RuleBook, RuleMeta

VALUES: list[Any] = ["x", "a  b\nc", "", 1, True, 1.0, -0.0, None, ["l"], {"d": 1}]


def _plain(meta: RuleMeta, params: dict[str, Any]) -> str:
    return " ".join(meta.fix.format_map(model._Blank(params)).split())


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_every_rule_renders_as_formatting_does(value: Any) -> None:
    for meta in RuleBook.load().rules.values():
        names = model._fix_fields(meta.fix) or ()
        for params in ({}, {n: value for n in names}, {n: value for n in names[:1]}):
            for _ in range(2):  # the second time from the cache
                assert meta.render_fix(dict(params)) == _plain(meta, params), (meta.id, params)


def test_templates_the_cache_cannot_key_are_rendered_each_time() -> None:
    for fix in ("{} and {0}", "{a:{w}}", "{a.real} {b[0]}"):
        assert model._fix_fields(fix) is None or model._fix_fields(fix) == ("a", "b")
    meta = RuleMeta("r", "info", "t", "use {a.upper} or {b[0]}", "")
    assert meta.render_fix({"a": "x", "b": "yz"}).startswith("use <built-in method upper")
    assert meta.render_fix({"a": "x", "b": "yz"}).endswith("or y")
    nested = RuleMeta("r", "info", "t", "{a:>{w}}|", "")
    assert nested.render_fix({"a": "x", "w": "3"}) == "x|"
    assert nested.render_fix({"a": "x", "w": "4"}) == "x|"
