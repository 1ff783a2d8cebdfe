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

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings
from google.protobuf import any_pb2

from kubedra.cel import _protos, cost
from kubedra.cel.library import QUANTITY_OVERLOADS, CELFunctionError, build_extension
from kubedra.cel.library.regex import compile_regex
from kubedra.cel.values import RUNTIME_POOL
from kubedra.errors import InputError
from kubedra.k8s.versions import DEFAULT_TARGET, SUPPORTED, Version, require_supported

SUPPORTED_VERSIONS = SUPPORTED
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


class CELCompileError(InputError):
    """An expression that does not compile (syntax, types, result type, length, cost). ``detail`` is upstream-like."""

    def __init__(self, detail: str, expression: str = "") -> None:
        super().__init__(detail)
        self.detail = detail
        self.expression = expression


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
    if release < (1, 37) or available((1, 0), (1, 37)):
        groups.add("lists_v0")
    if release >= (1, 37) and available((1, 37)):
        groups.update({"lists_v0", "lists_v1"})
    if available((1, 33)):
        groups.add("semver")
    if available((1, 34)):
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


# ------------------------------------------------------------------------------------------------ errors
_STATUS = re.compile(
    r"^(?:(?:INVALID_ARGUMENT|NOT_FOUND|OUT_OF_RANGE|UNKNOWN|INTERNAL|UNIMPLEMENTED|FAILED_PRECONDITION|"
    r"ALREADY_EXISTS|RESOURCE_EXHAUSTED|CANCELLED|ABORTED|DATA_LOSS|PERMISSION_DENIED|UNAUTHENTICATED|"
    r"DEADLINE_EXCEEDED|UNAVAILABLE): )+"
)
_STATUS_TAIL = re.compile(r" \[[A-Z_]+\]$")
_CROSS_NUMERIC = re.compile(
    r"found no matching overload for '_(?:<|<=|>|>=)_' applied to '\((int|uint|double), (int|uint|double)\)'"
)


def clean_status(message: str) -> str:
    """Strip absl status decorations (``INVALID_ARGUMENT: ... [INVALID_ARGUMENT]``)."""
    return _STATUS_TAIL.sub("", _STATUS.sub("", message.strip()))


def _only_cross_numeric(message: str) -> bool:
    errors = [ln for ln in clean_status(message).splitlines() if ln.startswith("ERROR:")]
    if not errors:
        return False
    for ln in errors:
        m = _CROSS_NUMERIC.search(ln)
        if not m or m.group(1) == m.group(2):
            return False
    return True


# ------------------------------------------------------------------------------------------------ AST
def decode(serialized: bytes) -> tuple[str, Any]:
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    kind = wrapper.type_url.rsplit("/", 1)[-1]
    msg = _protos.CheckedExpr() if kind == "cel.expr.CheckedExpr" else _protos.ParsedExpr()
    msg.ParseFromString(wrapper.value)
    return kind, msg


def encode(kind: str, msg: Any) -> bytes:
    wrapper = any_pb2.Any(type_url=f"type.googleapis.com/{kind}", value=msg.SerializeToString())
    return wrapper.SerializeToString()


def walk(e: Any) -> Iterable[Any]:
    """Pre-order walk over a cel.expr.Expr tree."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        kind = node.WhichOneof("expr_kind")
        if kind == "select_expr":
            stack.append(node.select_expr.operand)
        elif kind == "call_expr":
            stack.extend(reversed(node.call_expr.args))
            if node.call_expr.HasField("target"):
                stack.append(node.call_expr.target)
        elif kind == "list_expr":
            stack.extend(reversed(node.list_expr.elements))
        elif kind == "struct_expr":
            for ent in reversed(node.struct_expr.entries):
                stack.append(ent.value)
                if ent.HasField("map_key"):
                    stack.append(ent.map_key)
        elif kind == "comprehension_expr":
            c = node.comprehension_expr
            stack.extend([c.result, c.loop_step, c.loop_condition, c.accu_init, c.iter_range])


def type_text(t: Any) -> str:
    """cel-go style type names for messages (``bool``, ``list(string)``, ``map(string, int)``...)."""
    if t is None:
        return "dyn"
    k = t.WhichOneof("type_kind")
    if k == "primitive":
        return {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}.get(t.primitive, "dyn")
    if k == "well_known":
        return {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}.get(
            t.well_known, "dyn"
        )
    if k == "list_type":
        return f"list({type_text(t.list_type.elem_type)})"
    if k == "map_type":
        return f"map({type_text(t.map_type.key_type)}, {type_text(t.map_type.value_type)})"
    if k == "message_type":
        return "map(string, dyn)" if t.message_type == "google.protobuf.Struct" else t.message_type
    if k == "abstract_type":
        params = ", ".join(type_text(p) for p in t.abstract_type.parameter_types)
        return f"{t.abstract_type.name}({params})" if params else t.abstract_type.name
    if k == "null":
        return "null_type"
    if k == "type":
        return "type"
    if k == "type_param":
        return t.type_param
    return "dyn"


def _position(checked: Any, expr_id: int, text: str) -> str:
    offset = checked.source_info.positions.get(expr_id)
    if offset is None:
        return "<input>"
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"<input>:{line}:{col}"


def validate_ast(checked: Any, text: str) -> None:
    """apiserver's 1.29+ AST validators: homogeneous aggregate literals and constant regex arguments."""
    for node in walk(checked.expr):
        kind = node.WhichOneof("expr_kind")
        if kind == "list_expr" and len(node.list_expr.elements) > 1:
            optional_idx = set(node.list_expr.optional_indices)
            _homogeneous(
                checked, text, [el for i, el in enumerate(node.list_expr.elements) if i not in optional_idx]
            )
        elif (
            kind == "struct_expr" and not node.struct_expr.message_name and len(node.struct_expr.entries) > 1
        ):
            entries = [e for e in node.struct_expr.entries if not e.optional_entry]
            _homogeneous(checked, text, [e.map_key for e in entries])
            _homogeneous(checked, text, [e.value for e in entries])
        elif kind == "call_expr":
            call = node.call_expr
            pattern_arg = None
            if call.function == "matches":
                pattern_arg = (
                    call.args[0]
                    if call.HasField("target") and call.args
                    else (call.args[1] if len(call.args) > 1 else None)
                )
            elif call.function in ("find", "findAll") and call.HasField("target") and call.args:
                pattern_arg = call.args[0]
            if pattern_arg is not None and pattern_arg.WhichOneof("expr_kind") == "const_expr":
                pattern = pattern_arg.const_expr.string_value
                try:
                    compile_regex(pattern)
                except CELFunctionError as e:
                    if call.function == "matches":  # cel-go ValidateRegexLiterals (a compile issue)
                        raise CELCompileError(
                            f"compilation failed: ERROR: {_position(checked, pattern_arg.id, text)}: "
                            "invalid matches argument"
                        ) from None
                    # apiserver's Find(All)RegexOptimization compiles constant patterns in env.Program
                    detail = str(e).removeprefix("Illegal regex: ")
                    raise CELCompileError(f"program instantiation failed: {detail}") from None


# Overloads that accept a kubernetes.Quantity besides the quantity library's own (cel-go generic ones).
_QUANTITY_GENERIC_OVERLOADS = frozenset(
    {
        "equals",
        "not_equals",
        "in_list",
        "in_map",
        "type",
        "to_dyn",
        "conditional",
        "optional_of",
        "optional_ofNonZeroValue",
        "optional_orValue_value",
    }
)


def _capacity_value(node: Any, var: str) -> bool:
    """``device.capacity[D][N]`` / ``device.capacity[D].N`` (any mix of select and index)."""

    def domain(n: Any) -> bool:
        kind = n.WhichOneof("expr_kind")
        if kind == "select_expr" and not n.select_expr.test_only:
            return _capacity_map(n.select_expr.operand, var)
        if kind == "call_expr" and n.call_expr.function == "_[_]" and len(n.call_expr.args) == 2:
            return _capacity_map(n.call_expr.args[0], var)
        return False

    kind = node.WhichOneof("expr_kind")
    if kind == "select_expr" and not node.select_expr.test_only:
        return domain(node.select_expr.operand)
    if kind == "call_expr" and node.call_expr.function == "_[_]" and len(node.call_expr.args) == 2:
        return domain(node.call_expr.args[0])
    return False


def _capacity_map(node: Any, var: str) -> bool:
    return _device_map(node, var) and node.select_expr.field == "capacity"


def check_capacity_values(checked: Any, text: str, var: str) -> None:
    """Reject calls that upstream's checker rejects because a capacity value is a ``kubernetes.Quantity``.

    kubedra's checker types ``device.capacity[D][N]`` as dyn (a proto map cannot hold maps), so e.g.
    ``string(device.capacity[D].memory)`` would compile; upstream declares the values as Quantity and fails
    at compile time with "found no matching overload". A call with a capacity value as an argument must have
    an overload that takes a Quantity (the quantity library's, or CEL's generic ones).
    """

    if not getattr(checked, "reference_map", None):
        return
    capacity_ids = {n.id for n in walk(checked.expr) if _capacity_value(n, var)}
    if not capacity_ids:
        return
    for node in walk(checked.expr):
        if node.WhichOneof("expr_kind") != "call_expr":
            continue
        call = node.call_expr
        operands = ([call.target] if call.HasField("target") else []) + list(call.args)
        if not any(o.id in capacity_ids for o in operands):
            continue
        ref = checked.reference_map.get(node.id)
        ids = set(ref.overload_id) if ref is not None else set()
        names = [
            _protos.QUANTITY_TYPE if o.id in capacity_ids else type_text(checked.type_map.get(o.id))
            for o in operands
        ]
        if ids & {"equals", "not_equals"} and all(n in (_protos.QUANTITY_TYPE, "dyn") for n in names):
            continue
        if ids & (QUANTITY_OVERLOADS | (_QUANTITY_GENERIC_OVERLOADS - {"equals", "not_equals"})):
            continue
        if call.HasField("target"):
            applied = f"{names[0]}.({', '.join(names[1:])})"
        else:
            applied = f"({', '.join(names)})"
        raise CELCompileError(
            f"compilation failed: ERROR: {_position(checked, node.id, text)}: found no matching overload for "
            f"'{call.function}' applied to '{applied}'",
            text,
        )


def _homogeneous(checked: Any, text: str, elements: list[Any]) -> None:
    first: str | None = None
    for el in elements:
        t = checked.type_map.get(el.id)
        name = type_text(t)
        if name == "dyn" or (t is not None and t.WhichOneof("type_kind") == "null"):
            continue
        if first is None:
            first = name
        elif name != first:
            raise CELCompileError(
                f"compilation failed: ERROR: {_position(checked, el.id, text)}: expected type '{first}' but found '{name}'"
            )


class _Rewriter:
    def __init__(self, checked: Any) -> None:
        self.checked = checked
        self.is_checked = hasattr(checked, "reference_map")
        ids = [n.id for n in walk(checked.expr)]
        if self.is_checked:
            ids += [*checked.type_map.keys(), *checked.reference_map.keys()]
        ids += list(checked.source_info.macro_calls.keys())
        self.next_id = max([0, *ids]) + 1

    def move_ref(self, dst: int, src: int) -> None:
        if self.is_checked:
            self.checked.reference_map[dst].CopyFrom(self.checked.reference_map[src])
            del self.checked.reference_map[src]

    def type_of(self, expr_id: int) -> Any:
        return self.checked.type_map.get(expr_id) if self.is_checked else None

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def call(self, target: Any, function: str, overload: str, args: list[Any], result_type: Any) -> Any:
        e = _protos.Expr(id=self.new_id())
        e.call_expr.function = function
        if target is not None:
            e.call_expr.target.CopyFrom(target)
        for a in args:
            e.call_expr.args.add().CopyFrom(a)
        if self.is_checked:
            self.checked.reference_map[e.id].overload_id.append(overload)
            if result_type is not None:
                self.checked.type_map[e.id].CopyFrom(result_type)
        return e

    def const_string(self, value: str) -> Any:
        e = _protos.Expr(id=self.new_id())
        e.const_expr.string_value = value
        return e

    def empty_map(self) -> Any:
        e = _protos.Expr(id=self.new_id())
        e.struct_expr.SetInParent()
        return e


def _device_map(node: Any, device_var: str) -> bool:
    """Is ``node`` the ``device.attributes`` / ``device.capacity`` select?"""
    if node.WhichOneof("expr_kind") != "select_expr" or node.select_expr.test_only:
        return False
    sel = node.select_expr
    return (
        sel.field in ("attributes", "capacity")
        and sel.operand.WhichOneof("expr_kind") == "ident_expr"
        and sel.operand.ident_expr.name == device_var
    )


def rewrite(checked: Any, domain_default_var: str | None) -> None:
    """Apply the runtime rewrites described in the module docstring, in place."""
    rw = _Rewriter(checked)
    for node in list(walk(checked.expr)):
        kind = node.WhichOneof("expr_kind")
        if kind == "call_expr":
            call = node.call_expr
            if call.function == "cel.@mapInsert":
                call.function = "kubedra.@mapInsert"
                continue
            if call.function == "format.named" and not call.HasField("target"):
                inner = rw.call(None, "kubedra.namedFormat", "kubedra_named_format", list(call.args), None)
                _replace_with_ofnonzero(rw, node, inner)
                continue
            if call.function == "validate" and call.HasField("target"):
                ids = checked.reference_map.get(node.id) if rw.is_checked else None
                if ids is None or "format-validate" in ids.overload_id:
                    inner = rw.call(
                        None,
                        "kubedra.formatValidate",
                        "kubedra_format_validate",
                        [call.target, *call.args],
                        None,
                    )
                    _replace_with_ofnonzero(rw, node, inner)
                    continue
            if (
                domain_default_var is not None
                and call.function == "_[_]"
                and not call.HasField("target")
                and len(call.args) == 2
                and _device_map(call.args[0], domain_default_var)
            ):
                _domain_default(rw, node, call.args[0], call.args[1])
        elif (
            kind == "select_expr"
            and domain_default_var is not None
            and _device_map(node.select_expr.operand, domain_default_var)
        ) and not node.select_expr.test_only:
            key = rw.const_string(node.select_expr.field)
            _domain_default(rw, node, node.select_expr.operand, key, optional_select=True)
    # Children before parents, so that a rewritten node never copies a child that is rewritten later.
    for node in reversed(list(walk(checked.expr))):
        if node.WhichOneof("expr_kind") == "call_expr":
            call = node.call_expr
            if call.function in ("_==_", "_!=_") and len(call.args) == 2 and _quantities(rw, call.args):
                _quantity_equality(rw, node)


def _domain_default(rw: _Rewriter, node: Any, mapping: Any, key: Any, optional_select: bool = False) -> None:
    result_type = rw.type_of(node.id)
    opt_type = _protos.CelType()
    opt_type.abstract_type.name = "optional_type"
    if result_type is not None:
        opt_type.abstract_type.parameter_types.add().CopyFrom(result_type)
    if optional_select:
        opt = rw.call(None, "_?._", "select_optional_field", [mapping, key], opt_type)
    else:
        opt = rw.call(None, "_[?_]", "map_optindex_optional_value", [mapping, key], opt_type)
    default = rw.empty_map()
    new = rw.call(opt, "orValue", "optional_orValue_value", [default], result_type)
    new_id = node.id
    node.Clear()
    node.CopyFrom(new)
    node.id = new_id
    rw.move_ref(new_id, new.id)


def _quantities(rw: _Rewriter, args: Any) -> bool:
    """A comparison with a Quantity on at least one side (the other may be dyn, e.g. a capacity)."""
    for a in args:
        t = rw.type_of(a.id)
        if (
            t is not None
            and t.WhichOneof("type_kind") == "message_type"
            and t.message_type == _protos.QUANTITY_TYPE
        ):
            return True
    return False


def _quantity_equality(rw: _Rewriter, node: Any) -> None:
    """``a == b`` / ``a != b`` on quantities -> ``kubedra.quantityEquals(a, b)`` (negated for ``!=``)."""
    keep, negate = node.id, node.call_expr.function == "_!=_"
    bool_type = rw.type_of(node.id)
    new = rw.call(
        None, "kubedra.quantityEquals", "kubedra_quantity_equals", list(node.call_expr.args), bool_type
    )
    if negate:
        new = rw.call(None, "!_", "logical_not", [new], bool_type)
    node.Clear()
    node.CopyFrom(new)
    node.id = keep
    rw.move_ref(keep, new.id)


def _replace_with_ofnonzero(rw: _Rewriter, node: Any, inner: Any) -> None:
    keep = node.id
    new = rw.call(None, "optional.ofNonZeroValue", "optional_ofNonZeroValue", [inner], rw.type_of(node.id))
    node.Clear()
    node.CopyFrom(new)
    node.id = keep
    rw.move_ref(keep, new.id)


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

    def eval(self, activation: Any) -> Any:
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
        sizes: cost.SizeFn | None = None,
        domain_default_var: str | None = None,
    ) -> None:
        self.groups = frozenset(groups)
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
            if _only_cross_numeric(message):
                return self._compile_unchecked(text)
            raise CELCompileError("compilation failed: " + clean_status(message), text) from None
        kind, checked = decode(expr.serialize())
        validate_ast(checked, text)
        if self.domain_default_var is not None:
            check_capacity_values(checked, text, self.domain_default_var)
        out_type = type_text(checked.type_map.get(checked.expr.id))
        max_cost = cost.estimate(checked, self.sizes) if estimate_cost else cost.MAX
        source = _copy(checked)
        rewrite(checked, self.domain_default_var)
        try:
            runtime_expr = self.runtime.deserialize(encode(kind, checked))
        except RuntimeError as e:  # pragma: no cover - a rewrite bug, not user input
            raise CELCompileError(
                f"internal error loading compiled expression: {clean_status(str(e))}", text
            ) from None
        return Program(text, runtime_expr, out_type, max_cost, True, source)

    def _compile_unchecked(self, text: str) -> Program:
        try:
            parsed = self.runtime.compile(text, disable_check=True)
        except RuntimeError as e:
            raise CELCompileError("compilation failed: " + clean_status(str(e)), text) from None
        kind, ast = decode(parsed.serialize())
        max_cost = cost.estimate(ast, self.sizes)  # approximate: no types, so no per-type rules
        source = _copy(ast)
        rewrite(ast, self.domain_default_var)
        return Program(text, self.runtime.deserialize(encode(kind, ast)), "dyn", max_cost, False, source)


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
    return Environment(variables, groups, flavor=flavor)
