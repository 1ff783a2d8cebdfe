"""Kubernetes CEL environments on cel-expr-python: version-gated libraries, compile pipeline, runtime.

Building blocks (reused by the DRA selector environment and by the policy/migrate helpers):

``library_groups(target_version, stored, flavor) -> frozenset[str]``
    Which Kubernetes libraries an environment has, following apiserver ``pkg/cel/environment/base.go``:
    ``NewExpressions`` (validation of new/changed expressions) only gets libraries introduced at or before the
    *compatibility version*, which for a kube-apiserver of minor N is N-1 (``MinCompatibilityVersion``);
    ``StoredExpressions`` (the scheduler, unchanged stored objects) gets every library that exists in release N.
``build_env(variables, target_version="1.37", *, stored=False, extra_groups=(), flavor="generic") -> Environment``
    An :class:`Environment` whose ``compile(text)`` type-checks against ``variables`` (name -> ``cel.Type``) and
    returns a :class:`Program` to evaluate with ``program.eval(activation)``. Variables of message types are
    checked statically but passed as plain Python dicts at run time.

The pipeline behind ``Environment.compile``:

1. type-check in a *checker* env (variables with their declared types, only the version's libraries);
2. decode the checked AST (``Expression.serialize()`` is a ``cel.expr.CheckedExpr``), run the AST validators
   apiserver enables since 1.29 (homogeneous aggregate literals, constant regex arguments), estimate the cost
   (:mod:`kubedra.cel.cost`) and apply the runtime rewrites below;
3. load the rewritten AST into a shared *runtime* env (all variables dyn, every library) with ``deserialize``.

Rewrites (all invisible to the expression author):

* ``kubedra.cel.selector`` asks for domain defaults: ``device.attributes[D]`` / ``device.capacity[D]`` become
  ``M[?D].orValue({})``, reproducing DRA's map that returns an empty map for a missing domain while ``D in M``
  stays false.
* ``transformMap``/``transformMapEntry`` (two-variable comprehensions, cel-go ext.TwoVarComprehensions) use an
  internal ``cel.@mapInsert`` that cel-expr-python's runtime does not register; it is redirected to a Python
  implementation.
* ``format.named(n)`` / ``<format>.validate(s)`` return optionals, which a Python function cannot produce; they
  run as ``optional.ofNonZeroValue(<helper>)``.
* ``a == b`` / ``a != b`` between quantities run as ``kubedra.quantityEquals(a, b)``: a Quantity message carries
  apimachinery's representation besides its value (``isInteger()`` depends on it), and ``Quantity.Equal``
  compares values only.

Known gaps versus cel-go (each reported in the tests): cross-type numeric ordering (``1 < 1.5``) is unknown to
cel-cpp's checker, so such an expression is checked without types once its only errors are those comparisons;
the Authz libraries
are not declared (no ``authorizer`` variable exists in these environments); cel-expr-python has no runtime
cost limit or interrupt hook (the selector layer enforces the limit from the static estimate, see selector.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from kubedra.cel import _protos, cost, costmodel
from kubedra.cel.checks import (
    CELCompileError,
    check_capacity_values,
    clean_status,
    decode,
    encode,
    only_cross_numeric,
    type_text,
    validate_ast,
)
from kubedra.cel.library import build_extension
from kubedra.cel.rewrite import rewrite
from kubedra.cel.values import RUNTIME_POOL
from kubedra.k8s.quantity import quantity_rules
from kubedra.k8s.versions import DEFAULT_TARGET, Version, holds, require_supported, since

ALL_RUNTIME_GROUPS = (
    "urls",
    "regex",
    "lists_v0",
    "quantity",
    "ip",
    "cidr",
    "format",
    "semver",
    "map_insert",
    "quantity_eq",
)


def parse_version(text: str) -> tuple[int, int]:
    v = Version.parse(text, what="Kubernetes version")
    return v.major, v.minor


def check_target_version(text: str) -> tuple[int, int]:
    v = require_supported(text, what="target version")
    return v.major, v.minor


def compatibility_version(target_version: str) -> tuple[int, int]:
    """``MinCompatibilityVersion`` of a kube-apiserver at ``target_version`` (one minor behind)."""
    major, minor = check_target_version(target_version)
    return major, minor - 1


def library_groups(target_version: str, stored: bool, flavor: str = "generic") -> frozenset[str]:
    """Library groups of apiserver's base environment (+ DRA extras when ``flavor == "dra"``)."""
    release = check_target_version(target_version)
    compat = (1 << 30, 0) if stored else compatibility_version(target_version)

    def available(introduced: tuple[int, int], removed: tuple[int, int] | None = None) -> bool:
        if removed is not None and release >= removed and compat >= removed:
            return False
        return compat >= introduced

    groups = {
        "urls",
        "regex",
        "quantity",
        "optional",
        "strings_v2",
        "sets",
        "ip",
        "cidr",
        "format",
        "two_var",
    }
    # library.Lists: unversioned (v0) through 1.36; 1.37 replaced it by v0 [1.0, 1.37) + v1 [1.37, ...).
    lists_v1 = since("cel.listsV1").pair()
    if release < lists_v1 or available((1, 0), lists_v1):
        groups.add("lists_v0")
    if release >= lists_v1 and available(lists_v1):
        groups.update({"lists_v0", "lists_v1"})
    if available(since("cel.semver").pair()):
        groups.add("semver")
    if available(since("cel.extLists").pair()):
        groups.add("ext_lists")
    if flavor == "dra":
        groups.add("bindings")
        if "lists_v1" in groups:
            # DRA declares its own includes(dyn, dyn) with the 48-element guard; cel-go would reject two
            # overloads with one signature, and the DRA estimator/behaviour is what the scheduler runs.
            groups.discard("lists_v1")
            groups.add("lists_v0")
    return frozenset(groups)


# ------------------------------------------------------------------------------------------------ envs
def _config(groups: Iterable[str]) -> Any:
    g = set(groups)
    lines = ["extensions:"]
    if "sets" in g:
        lines.append("  - name: sets")
    if "two_var" in g:
        lines.append("  - name: two-var-comprehensions")
    if "ext_lists" in g:
        lines += ["  - name: lists", "    version: 2"]  # cel-cpp lists v2 == cel-go ext.Lists v3 functions
    return cel.NewEnvConfigFromYaml("\n".join(lines) + "\n") if len(lines) > 1 else None


def _extensions(groups: Iterable[str], runtime: bool, dra_includes: bool) -> list[Any]:
    g = set(groups)
    exts: list[Any] = []
    if "strings_v2" in g:
        exts.append(ext_strings.ExtStrings(2))
    if "optional" in g:
        exts.append(ext_optional.ExtOptional(2))
    if "bindings" in g:
        exts.append(ext_bindings.ExtBindings())
    lib_groups = {x for x in g if x in ALL_RUNTIME_GROUPS or x == "lists_v1"}
    if dra_includes:
        lib_groups.add("dra_includes")
    exts.append(build_extension(sorted(lib_groups), runtime=runtime))
    return exts


_CHECKER_ONLY_OPTIONAL = [
    cel.FunctionDecl(
        "format.named",
        [
            cel.Overload(
                "format-named",
                cel.Type.AbstractType("optional_type", [cel.Type(_protos.FORMAT_TYPE)]),
                [cel.Type.STRING],
            )
        ],
    ),
    cel.FunctionDecl(
        "validate",
        [
            cel.Overload(
                "format-validate",
                cel.Type.AbstractType("optional_type", [cel.Type.List(cel.Type.STRING)]),
                [cel.Type(_protos.FORMAT_TYPE), cel.Type.STRING],
                is_member=True,
            )
        ],
    ),
]

_RUNTIME_LOCK = threading.Lock()
_RUNTIME_ENVS: dict[tuple[str, tuple[str, ...]], Any] = {}


def runtime_env(variables: Iterable[str], flavor: str) -> Any:
    """The shared evaluation env: every library, variables dyn (checked ASTs are loaded into it)."""
    key = (flavor, tuple(sorted(variables)))
    with _RUNTIME_LOCK:
        env = _RUNTIME_ENVS.get(key)
        if env is None:
            groups = {
                *ALL_RUNTIME_GROUPS,
                "strings_v2",
                "optional",
                "bindings",
                "sets",
                "two_var",
                "ext_lists",
            }
            if flavor != "dra":
                groups.add("lists_v1")
            env = cel.NewEnv(
                RUNTIME_POOL,
                config=_config(groups),
                variables={name: cel.Type.DYN for name in key[1]},
                extensions=_extensions(groups, runtime=True, dra_includes=flavor == "dra"),
            )
            _RUNTIME_ENVS[key] = env
        return env


# ------------------------------------------------------------------------------------------------ API
def _copy(message: Any) -> Any:
    clone = type(message)()
    clone.CopyFrom(message)
    return clone


@dataclass(frozen=True)
class Program:
    """A compiled expression ready to run in the runtime env."""

    expression: str
    expr: Any  # cel_expr_python Expression (runtime env)
    output_type: str  # cel-go style, e.g. "bool", "dyn"
    max_cost: int  # static worst-case estimate (2**64-1 when unknown)
    checked: bool  # False when type-checking had to be skipped (cross-type numeric comparisons)
    # The checked AST as written (before the runtime rewrites): what cel-go's cost tracker walks.
    source: Any = field(default=None, compare=False, repr=False)
    # quantity() parses like the release's apimachinery (quantity.nineteenDigitInt64 in data/versions.yaml).
    quantity_since_138: bool = False

    def eval(self, activation: Any) -> Any:
        with quantity_rules(self.quantity_since_138):
            return self.expr.eval(activation)


class Environment:
    """A checker env for one library set + the shared runtime env. Thread-safe for compile and eval."""

    def __init__(
        self,
        variables: Mapping[str, Any],
        groups: Iterable[str],
        *,
        pool: Any = None,
        flavor: str = "generic",
        sizes: costmodel.SizeFn | None = None,
        domain_default_var: str | None = None,
        quantity_since_138: bool = False,
    ) -> None:
        self.groups = frozenset(groups)
        self.quantity_since_138 = quantity_since_138
        self.flavor = flavor
        self.variables = dict(variables)
        self.sizes = sizes or (lambda path: None)
        self.domain_default_var = domain_default_var
        checker_groups = set(self.groups)
        extensions = _extensions(
            checker_groups, runtime=False, dra_includes=flavor == "dra" and "dra_includes" in checker_groups
        )
        if "format" in checker_groups:
            extensions.append(cel.CelExtension("kubernetes.format.optional", _CHECKER_ONLY_OPTIONAL))
        self.checker = cel.NewEnv(
            pool or _protos.new_pool(None),
            config=_config(checker_groups),
            variables=self.variables,
            extensions=extensions,
        )
        self.runtime = runtime_env(self.variables, flavor)
        self._lock = threading.Lock()

    def compile(self, text: str, *, estimate_cost: bool = True) -> Program:
        try:
            expr = self.checker.compile(text)
        except RuntimeError as e:
            message = str(e)
            if only_cross_numeric(message):
                return self._compile_unchecked(text)
            raise CELCompileError("compilation failed: " + clean_status(message), text) from None
        kind, checked = decode(expr.serialize())
        validate_ast(checked, text)
        if self.domain_default_var is not None:
            check_capacity_values(checked, text, self.domain_default_var)
        out_type = type_text(checked.type_map.get(checked.expr.id))
        max_cost = cost.estimate(checked, self.sizes) if estimate_cost else costmodel.MAX
        source = _copy(checked)
        rewrite(checked, self.domain_default_var)
        try:
            runtime_expr = self.runtime.deserialize(encode(kind, checked))
        except RuntimeError as e:  # pragma: no cover - a rewrite bug, not user input
            raise CELCompileError(
                f"internal error loading compiled expression: {clean_status(str(e))}", text
            ) from None
        return Program(text, runtime_expr, out_type, max_cost, True, source, self.quantity_since_138)

    def _compile_unchecked(self, text: str) -> Program:
        try:
            parsed = self.runtime.compile(text, disable_check=True)
        except RuntimeError as e:
            raise CELCompileError("compilation failed: " + clean_status(str(e)), text) from None
        kind, ast = decode(parsed.serialize())
        max_cost = cost.estimate(ast, self.sizes)  # approximate: no types, so no per-type rules
        source = _copy(ast)
        rewrite(ast, self.domain_default_var)
        runtime_expr = self.runtime.deserialize(encode(kind, ast))
        return Program(text, runtime_expr, "dyn", max_cost, False, source, self.quantity_since_138)


def build_env(
    variables: Mapping[str, Any],
    target_version: str = DEFAULT_TARGET,
    *,
    stored: bool = False,
    extra_groups: Iterable[str] = (),
    flavor: str = "generic",
) -> Environment:
    """An environment with apiserver's base libraries at ``target_version`` plus ``extra_groups``.

    Example (ValidatingAdmissionPolicy)::

        env = build_env({n: cel.Type.DYN for n in ("object", "oldObject", "params", "namespaceObject", "request")})
        program = env.compile("object.spec.replicas <= 5")
        program.eval(env.runtime.Activation({"object": {...}, ...}))
    """
    groups = set(library_groups(target_version, stored, flavor)) | set(extra_groups)
    since_138 = holds("quantity.nineteenDigitInt64", Version(*check_target_version(target_version)))
    return Environment(variables, groups, flavor=flavor, quantity_since_138=since_138)
