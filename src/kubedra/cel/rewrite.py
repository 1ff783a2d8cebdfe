"""The runtime rewrites of a checked AST (see :mod:`kubedra.cel.env`): domain defaults, map inserts,
optional-returning format helpers, value equality between quantities."""

from __future__ import annotations

from typing import Any

from kubedra.cel import _protos
from kubedra.cel.checks import device_map, walk


class _Rewriter:
    def __init__(self, checked: Any) -> None:
        self.checked = checked
        self.is_checked = hasattr(checked, "reference_map")
        ids = [n.id for n in walk(checked.expr)]
        if self.is_checked:
            ids += [*checked.type_map.keys(), *checked.reference_map.keys()]
        ids += list(checked.source_info.macro_calls.keys())
        self.next_id: int = max([0, *ids]) + 1

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
                and device_map(call.args[0], domain_default_var)
            ):
                _domain_default(rw, node, call.args[0], call.args[1])
        elif (
            kind == "select_expr"
            and domain_default_var is not None
            and device_map(node.select_expr.operand, domain_default_var)
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
