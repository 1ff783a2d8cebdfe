"""Hugepages in a container's resources as the apiserver refuses them on create
(kubedra.k8s.podadmission.hugepage_issues); the refusals are those each testbed release's apiserver gave in a
server-side dry-run (tests/integration/test_hugepages_admission.py holds them there)."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.k8s.podadmission import resource_issues

# (limits, requests, the reason kubedra gives or None)
CASES: list[tuple[dict[str, Any], dict[str, Any], str | None]] = [
    ({"hugepages-2Mi": "2Mi", "memory": "1Gi"}, {}, None),
    ({"hugepages-2Mi": "3Mi", "memory": "1Gi"}, {}, "3Mi is not positive integer multiple of hugepages-2Mi"),
    (
        {"hugepages-2Mi": "4Mi", "memory": "1Gi"},
        {"hugepages-2Mi": "2Mi"},
        "must be equal to hugepages-2Mi limit",
    ),
    ({"memory": "1Gi"}, {"hugepages-2Mi": "2Mi"}, "Limit must be set for non overcommitable resources"),
    ({"hugepages-2Mi": "2Mi"}, {}, "HugePages require cpu or memory"),
    (
        {"hugepages-1Gi": "1.5Gi", "memory": "2Gi"},
        {},
        "1536Mi is not positive integer multiple of hugepages-1Gi",
    ),
    ({"hugepages-2Mi": "2097152500m", "memory": "1Gi"}, {}, "not positive integer multiple"),
    ({"hugepages-2Mi": "0", "memory": "1Gi"}, {}, None),
    ({"hugepages-3Mi": "6Mi", "memory": "1Gi"}, {}, None),
    ({"hugepages-2Mi": "2Mi", "memory": "1Gi"}, {"hugepages-2Mi": "2048Ki"}, None),
]


@pytest.mark.parametrize(("limits", "requests", "why"), CASES)
@pytest.mark.parametrize("release", ["1.35", "1.37", "1.38"])
def test_hugepages_refused_as_the_apiserver_refuses_them(
    limits: dict[str, Any], requests: dict[str, Any], why: str | None, release: str
) -> None:
    res: dict[str, Any] = {"limits": limits, **({"requests": requests} if requests else {})}
    found = resource_issues(res, ("resources",), release)
    if why is None:
        assert found == []
    else:
        assert any(why in reason for _, reason in found), found
