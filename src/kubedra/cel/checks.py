"""Checked CEL ASTs: decoding, walking, type names, error texts, and the AST validators apiserver runs
(homogeneous aggregate literals, constant regex arguments, capacity values as Quantities)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from google.protobuf import any_pb2

from kubedra.cel import _protos
from kubedra.cel.library import QUANTITY_OVERLOADS, CELFunctionError
from kubedra.cel.library.regex import compile_regex
from kubedra.errors import InputError


class CELCompileError(InputError):
    """An expression that does not compile (syntax, types, result type, length, cost). ``detail`` is upstream-like."""

    def __init__(self, detail: str, expression: str = "") -> None:
        super().__init__(detail)
        self.detail = detail
        self.expression = expression


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


def only_cross_numeric(message: str) -> bool:
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
    data: bytes = wrapper.SerializeToString()
    return data


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
        return str(t.type_param)
    return "dyn"


def _snippet(checked: Any, expr_id: int, text: str) -> str:
    """cel-go's source snippet under a compile error (common/error.go ToDisplayString): the error's line, tabs
    as spaces, and a line of dots up to its column (a wide dot per non-ASCII character) ending in ``^``."""
    offset = checked.source_info.positions.get(expr_id)
    if offset is None:
        return ""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    line = text[start : end if end >= 0 else len(text)].replace("\t", " ")
    before = line[: offset - start]
    dots = "".join("\uff0e" if ord(c) > 0x7F else "." for c in before)
    at = line[offset - start : offset - start + 1]
    caret = "\uff3e" if at and ord(at) > 0x7F else "^"
    return f"\n | {line}\n | {dots}{caret}"


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
                checked, text, [(el, i in optional_idx) for i, el in enumerate(node.list_expr.elements)]
            )
        elif (
            kind == "struct_expr" and not node.struct_expr.message_name and len(node.struct_expr.entries) > 1
        ):
            entries = node.struct_expr.entries
            _homogeneous(checked, text, [(e.map_key, False) for e in entries])
            _homogeneous(checked, text, [(e.value, e.optional_entry) for e in entries])
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
                            "invalid matches argument" + _snippet(checked, pattern_arg.id, text)
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
    return device_map(node, var) and node.select_expr.field == "capacity"


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
            f"'{call.function}' applied to '{applied}'" + _snippet(checked, node.id, text),
            text,
        )


def _homogeneous(checked: Any, text: str, elements: list[tuple[Any, bool]]) -> None:
    """cel-go's ValidateHomogeneousAggregateLiterals (v0.26-v0.29, what apiserver's base environment enables):
    every element's type must be equivalent to the first one's, ``dyn`` and ``null`` included; an optional
    element (``[?x]``, ``{?k: v}``) counts with the type inside the optional."""
    first: str | None = None
    for el, optional in elements:
        t = checked.type_map.get(el.id)
        if (
            optional
            and t is not None
            and t.WhichOneof("type_kind") == "abstract_type"
            and t.abstract_type.name == "optional_type"
            and t.abstract_type.parameter_types
        ):
            t = t.abstract_type.parameter_types[0]
        name = type_text(t)
        if first is None:
            first = name
        elif name != first:
            raise CELCompileError(
                f"compilation failed: ERROR: {_position(checked, el.id, text)}: expected type '{first}' but found '{name}'"
                + _snippet(checked, el.id, text)
            )


def device_map(node: Any, device_var: str) -> bool:
    """Is ``node`` the ``device.attributes`` / ``device.capacity`` select?"""
    if node.WhichOneof("expr_kind") != "select_expr" or node.select_expr.test_only:
        return False
    sel = node.select_expr
    return (
        sel.field in ("attributes", "capacity")
        and sel.operand.WhichOneof("expr_kind") == "ident_expr"
        and sel.operand.ident_expr.name == device_var
    )
