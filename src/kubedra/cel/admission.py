"""The CEL environment of ValidatingAdmissionPolicy expressions, and where they sit in a policy's spec.

Shared by ``kubedra policy test`` (which evaluates them) and ``kubedra validate`` (which compiles them, as
the apiserver does when the policy is created).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from kubedra.cel import build_env

VARIABLES = ("object", "oldObject", "params", "namespaceObject", "request", "variables")


@lru_cache(maxsize=4)
def admission_env(version: str) -> Any:
    """kubedra's Kubernetes CEL environment for ``version`` with the admission variables (all dyn)."""
    from cel_expr_python import cel  # noqa: PLC0415

    return build_env({n: cel.Type.DYN for n in VARIABLES}, version)


def admission_expressions(spec: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """(path from the object root, value) of every CEL expression in a ValidatingAdmissionPolicy ``spec``:
    matchConditions, variables, validations (expression and messageExpression), auditAnnotations."""
    for section, keys in (
        ("matchConditions", ("expression",)),
        ("variables", ("expression",)),
        ("validations", ("expression", "messageExpression")),
        ("auditAnnotations", ("valueExpression",)),
    ):
        items = spec.get(section)
        for i, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, Mapping):
                continue
            for key in keys:
                if key in item:
                    yield ("spec", section, i, key), item[key]
