"""ParseContext.alike (``parts``): a Pod's containers and tolerations parsed once per content, for a reader
whose models may share them (simulate's streamed read); what the key leaves out the parser never reads, and
values the parser reads differently never share a key."""

from __future__ import annotations

import copy

import pytest

from kubedra.errors import InputError
from kubedra.model.parse import parse_object


def _pod(**spec) -> dict:
    base = {
        "containers": [
            {
                "name": "main",
                "image": "a:1",
                "resources": {
                    "requests": {"cpu": "1"},
                    "limits": {"memory": "1Gi"},
                    "claims": [{"name": "c"}],
                },
            }
        ],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30}],
    }
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": base}


def _parse(obj: dict, parts: dict | None):
    parsed = parse_object(obj, None, None, None, parts)
    assert parsed is not None
    return parsed.obj


def test_equal_parts_are_one_model_and_equal_to_a_parse_without_parts():
    parts: dict = {}
    a, b = _parse(_pod(), parts), _parse(_pod(), parts)
    assert a.containers is b.containers
    assert a.tolerations is b.tolerations
    alone = _parse(_pod(), None)
    assert (a.containers, a.tolerations) == (alone.containers, alone.tolerations)
    # what the parser does not read (the image) shares the key; what it reads does not
    other = _pod()
    other["spec"]["containers"][0]["image"] = "b:2"
    assert _parse(other, parts).containers is a.containers
    more = _pod()
    more["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    assert _parse(more, parts).containers is not a.containers
    # absent lists parse as empty ones, one list for all
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"}, "spec": {}}
    x, y = _parse(bare, parts), _parse(copy.deepcopy(bare), parts)
    assert x.init_containers == []
    assert x.init_containers is y.init_containers
    assert x.tolerations == []


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"tolerationSeconds": 1}, {"tolerationSeconds": True}),  # both ints to the parser, not equal models
        ({"tolerationSeconds": 1}, {"tolerationSeconds": 1.0}),  # a float is dropped by the parser
    ],
)
def test_tolerations_read_differently_never_share(first, second):
    parts: dict = {}
    one = _parse(_pod(tolerations=[{"key": "k", **first}]), parts)
    two = _parse(_pod(tolerations=[{"key": "k", **second}]), parts)
    alone = _parse(_pod(tolerations=[{"key": "k", **second}]), None)
    assert two.tolerations is not one.tolerations
    assert [t.toleration_seconds for t in two.tolerations] == [
        t.toleration_seconds for t in alone.tolerations
    ]
    assert type(two.tolerations[0].toleration_seconds) is type(alone.tolerations[0].toleration_seconds)


def test_a_value_the_parser_refuses_is_refused_after_an_equal_looking_one():
    """A number where a quantity string was (1 == True to a tuple) has no key: it is parsed, and refused."""
    parts: dict = {}
    _parse(_pod(containers=[{"name": "m", "resources": {"requests": {"cpu": 1}}}]), parts)
    with pytest.raises(InputError, match="requests"):
        _parse(_pod(containers=[{"name": "m", "resources": {"requests": {"cpu": True}}}]), parts)
