"""Kubernetes CEL function libraries (apiserver ``pkg/cel/library``) as cel-expr-python declarations.

Every function keeps its upstream name, overload id and signature so that the type checker accepts and
rejects the same expressions as the apiserver. Implementations are Python functions.

cel-expr-python's runtime dispatches on the *kind* of each argument, so two overloads whose arguments have the
same kinds (``isGreaterThan(Quantity, Quantity)`` and ``isGreaterThan(Semver, Semver)`` are both
"message, message") cannot both carry an implementation. :func:`build_extension` declares all overloads for the
checker, attaches one implementation to the first overload of each kind signature and lets it dispatch on the
message type of the arguments.

Library groups (what :mod:`kubedra.cel.env` switches on per Kubernetes version):

==================  ===========================================================================================
``urls``            url, isURL, getScheme, getHost, getHostname, getPort, getEscapedPath, getQuery
``regex``           find, findAll (google-re2, Go regexp's syntax and messages; see :func:`compile_regex`)
``lists_v0``        isSorted, sum, min, max, indexOf, lastIndexOf (list overloads)
``lists_v1``        lists_v0 + includes (list_includes_dyn_dyn)
``quantity``        quantity, isQuantity, sign, isGreaterThan, isLessThan, compareTo, asApproximateFloat,
                    asInteger, isInteger, add, sub
``ip`` / ``cidr``   ip, isIP, ip.isCanonical, family, is* predicates, string; cidr, isCIDR, containsIP,
                    containsCIDR, ip, prefixLength, masked, string
``format``          format.<name>(), format.named(), <format>.validate()
``semver``          semver, isSemver (1 and 2 args), isGreaterThan, isLessThan, compareTo, major, minor, patch
``dra_includes``    includes (dra_includes_dyn_dyn; errors for lists longer than 48)
``map_insert``      kubedra.@mapInsert (runtime helper for transformMap/transformMapEntry, see env.py)
``quantity_eq``     kubedra.quantityEquals (runtime helper: ==/!= between quantities compare values, see env.py)
==================  ===========================================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from cel_expr_python import cel

from kubedra.cel import _protos

# Importing the library modules registers their functions, in this order (the checker declares them in it).
# isort: off
from kubedra.cel.library import quantity, semver, lists, regex, urls, ip, format, maps  # noqa: F401

# isort: on
from kubedra.cel.library.registry import REGISTRY, CELFunctionError, Fn, T, kind_of, msg_name

__all__ = ["QUANTITY_OVERLOADS", "CELFunctionError", "build_extension", "overload_ids"]


def _dispatcher(fns: list[Fn]) -> Callable[..., Any]:
    """One runtime implementation for overloads whose arguments share kinds: pick by message type names."""
    if len(fns) == 1:
        impl = fns[0].impl
        assert impl is not None
        return _wrap(impl)
    table: dict[tuple[str, ...], Callable[..., Any]] = {}
    for f in fns:
        assert f.impl is not None
        table[tuple(p.name() if p.is_message() else "" for p in f.params)] = f.impl
    first = fns[0].impl
    assert first is not None

    def dispatch(*args: Any) -> Any:
        key = tuple(msg_name(a) for a in args)
        return table.get(key, first)(*args)

    return _wrap(dispatch)


def _wrap(impl: Callable[..., Any]) -> Callable[..., Any]:
    return impl


def _runtime_type(t: Any) -> Any:
    """Runtime declarations only need argument kinds: lists/maps/type parameters become dyn-typed."""
    kind = kind_of(t)
    if kind == "any":
        return T.DYN
    if kind == "list":
        return T.List(T.DYN)
    if kind == "map":
        return T.Map(T.DYN, T.DYN)
    return t


def build_extension(
    groups: Iterable[str], name: str = "kubernetes", runtime: bool = False
) -> cel.CelExtension:
    """A CelExtension with every function of ``groups`` (see module docstring).

    cel-expr-python registers a runtime function for every overload of a declaration that has any
    implementation, and rejects two with the same argument kinds. So the *checker* variant declares every
    overload with its exact upstream signature and no implementation (it is never evaluated), and the
    *runtime* variant (``runtime=True``) declares one overload per argument-kind signature whose
    implementation dispatches on message types.
    """
    wanted = set(groups)
    by_name: dict[str, list[Fn]] = {}
    for f in REGISTRY:
        if f.group in wanted:
            by_name.setdefault(f.name, []).append(f)
    decls = []
    for fname, fns in by_name.items():
        overloads = []
        if not runtime:
            for f in fns:
                overloads.append(cel.Overload(f.overload_id, f.ret, list(f.params), is_member=f.member))
        else:
            by_kinds: dict[tuple[bool, tuple[str, ...]], list[Fn]] = {}
            for f in fns:
                by_kinds.setdefault((f.member, f.kinds), []).append(f)
            for group in by_kinds.values():
                f = group[0]
                same_ret = len({g.ret.name() for g in group}) == 1
                overloads.append(
                    cel.Overload(
                        f.overload_id,
                        _runtime_type(f.ret) if same_ret else T.DYN,
                        [_runtime_type(p) for p in f.params],
                        is_member=f.member,
                        impl=_dispatcher(group),
                    )
                )
        decls.append(cel.FunctionDecl(fname, overloads))
    return cel.CelExtension(name, decls)


def overload_ids(group: str) -> set[str]:
    return {f.overload_id for f in REGISTRY if f.group == group}


# Overload ids that take a kubernetes.Quantity (env.check_capacity_values: capacity values are Quantities).
QUANTITY_OVERLOADS = frozenset(
    f.overload_id
    for f in REGISTRY
    if any(p.is_message() and p.name() == _protos.QUANTITY_TYPE for p in f.params)
)
