"""Protobuf descriptors the CEL layer needs, built at import time (no generated code, no protoc).

* ``kubernetes.Quantity`` / ``kubernetes.Semver``: the two Kubernetes CEL object types, as dynamic messages so
  that cel-expr-python can carry them through expressions. Their fields are chosen so that proto equality is
  upstream's value equality: a Quantity holds its exact value in nano-units plus apimachinery's internal
  representation (which ``isInteger()`` depends on; ``==`` on quantities is rewritten to compare the value only,
  so ``quantity("200M") == quantity("0.2G")``), a Semver only the fields that take part in precedence (build metadata is dropped).
* ``kubernetes.DRADevice``: the *checker's* view of the ``device`` variable (field names and types for
  "undefined field" errors); at run time ``device`` is a plain map.
* ``cel.expr.CheckedExpr`` and friends (cel-spec ``syntax.proto`` / ``checked.proto``), to read and rewrite
  the checked AST that ``Expression.serialize()`` returns. Only the fields kubedra uses are declared; the rest
  survive a decode/encode round trip as unknown fields.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, empty_pb2, struct_pb2
from google.protobuf import message_factory as _mf

_F = descriptor_pb2.FieldDescriptorProto
_OPT, _REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED

QUANTITY_TYPE = "kubernetes.Quantity"
SEMVER_TYPE = "kubernetes.Semver"
DEVICE_TYPE = "kubernetes.DRADevice"
URL_TYPE = "kubernetes.URL"
FORMAT_TYPE = "kubernetes.NamedFormat"
IP_TYPE = "net.IP"
CIDR_TYPE = "net.CIDR"


def _field(
    msg: Any,
    name: str,
    number: int,
    ftype: int,
    label: int = _OPT,
    type_name: str = "",
    oneof: int | None = None,
) -> None:
    f = msg.field.add(name=name, number=number, type=ftype, label=label)
    if type_name:
        f.type_name = type_name
    if oneof is not None:
        f.oneof_index = oneof


def _map_field(
    msg: Any, name: str, number: int, key_type: int, value_type: int, value_type_name: str = ""
) -> None:
    entry = msg.nested_type.add(name="".join(p[:1].upper() + p[1:] for p in name.split("_")) + "Entry")
    entry.options.map_entry = True
    _field(entry, "key", 1, key_type)
    _field(entry, "value", 2, value_type, type_name=value_type_name)
    _field(msg, name, number, _F.TYPE_MESSAGE, _REP, f".{msg_full_name(msg)}.{entry.name}")


_FULL_NAMES: dict[int, str] = {}


def msg_full_name(msg: Any) -> str:
    return _FULL_NAMES[id(msg)]


def _message(parent: Any, name: str, prefix: str) -> Any:
    msg = (
        parent.message_type.add(name=name)
        if hasattr(parent, "message_type")
        else parent.nested_type.add(name=name)
    )
    _FULL_NAMES[id(msg)] = f"{prefix}.{name}"
    return msg


def _k8s_types_file() -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(
        name="kubedra/cel/kubernetes_types.proto", package="kubernetes", syntax="proto3"
    )
    q = _message(fdp, "Quantity", "kubernetes")
    _field(q, "nanos", 1, _F.TYPE_STRING)  # exact value in 1e-9 units, decimal integer text
    # apimachinery's representation, which AsInt64 (isInteger/asInteger) answers from: the int64Amount
    # scale as text, or "dec" for an inf.Dec. Not part of the value: quantity equality is rewritten to
    # kubedra.quantityEquals (env.py), which compares nanos only.
    _field(q, "scale", 2, _F.TYPE_STRING)
    s = _message(fdp, "Semver", "kubernetes")
    _field(s, "major", 1, _F.TYPE_UINT64)
    _field(s, "minor", 2, _F.TYPE_UINT64)
    _field(s, "patch", 3, _F.TYPE_UINT64)
    _field(s, "pre", 4, _F.TYPE_STRING)  # canonical prerelease text; equal text <=> equal precedence
    u = _message(fdp, "URL", "kubernetes")
    _field(u, "url", 1, _F.TYPE_STRING)
    f = _message(fdp, "NamedFormat", "kubernetes")
    _field(f, "name", 1, _F.TYPE_STRING)
    return fdp


def _net_types_file() -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(
        name="kubedra/cel/net_types.proto", package="net", syntax="proto3"
    )
    ip = _message(fdp, "IP", "net")
    _field(ip, "addr", 1, _F.TYPE_STRING)  # canonical text form
    cidr = _message(fdp, "CIDR", "net")
    _field(cidr, "prefix", 1, _F.TYPE_STRING)  # as written (address bits kept), canonical address text
    return fdp


def _device_file(with_multi_alloc: bool) -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(
        name="kubedra/cel/dra_device.proto",
        package="kubernetes",
        syntax="proto3",
        dependency=["google/protobuf/struct.proto"],
    )
    d = _message(fdp, "DRADevice", "kubernetes")
    _field(d, "driver", 1, _F.TYPE_STRING)
    # map(domain, map(id, dyn)): google.protobuf.Struct is CEL's map(string, dyn).
    _map_field(d, "attributes", 2, _F.TYPE_STRING, _F.TYPE_MESSAGE, ".google.protobuf.Struct")
    _map_field(d, "capacity", 3, _F.TYPE_STRING, _F.TYPE_MESSAGE, ".google.protobuf.Struct")
    if with_multi_alloc:
        _field(d, "allowMultipleAllocations", 4, _F.TYPE_BOOL)
    return fdp


def new_pool(device: str | None) -> descriptor_pool.DescriptorPool:
    """A descriptor pool with the Kubernetes types and, for a checker, one ``kubernetes.DRADevice`` shape.

    ``device`` is None (no device type), ``"v131"`` (driver, attributes, capacity) or ``"v134"`` (plus
    allowMultipleAllocations).
    """
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(struct_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(_k8s_types_file())
    pool.Add(_net_types_file())
    if device is not None:
        pool.Add(_device_file(device == "v134"))
    return pool


# ---------------------------------------------------------------------------------------------- cel.expr AST
def _ast_file() -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(
        name="kubedra/cel/cel_expr_subset.proto",
        package="cel.expr",
        syntax="proto3",
        dependency=["google/protobuf/empty.proto"],
    )
    P = "cel.expr"
    const = _message(fdp, "Constant", P)
    const.oneof_decl.add(name="constant_kind")
    _field(const, "null_value", 1, _F.TYPE_INT32, oneof=0)
    _field(const, "bool_value", 2, _F.TYPE_BOOL, oneof=0)
    _field(const, "int64_value", 3, _F.TYPE_INT64, oneof=0)
    _field(const, "uint64_value", 4, _F.TYPE_UINT64, oneof=0)
    _field(const, "double_value", 5, _F.TYPE_DOUBLE, oneof=0)
    _field(const, "string_value", 6, _F.TYPE_STRING, oneof=0)
    _field(const, "bytes_value", 7, _F.TYPE_BYTES, oneof=0)

    expr = _message(fdp, "Expr", P)
    E = ".cel.expr.Expr"
    ident = _message(expr, "Ident", f"{P}.Expr")
    _field(ident, "name", 1, _F.TYPE_STRING)
    sel = _message(expr, "Select", f"{P}.Expr")
    _field(sel, "operand", 1, _F.TYPE_MESSAGE, type_name=E)
    _field(sel, "field", 2, _F.TYPE_STRING)
    _field(sel, "test_only", 3, _F.TYPE_BOOL)
    call = _message(expr, "Call", f"{P}.Expr")
    _field(call, "target", 1, _F.TYPE_MESSAGE, type_name=E)
    _field(call, "function", 2, _F.TYPE_STRING)
    _field(call, "args", 3, _F.TYPE_MESSAGE, _REP, E)
    lst = _message(expr, "CreateList", f"{P}.Expr")
    _field(lst, "elements", 1, _F.TYPE_MESSAGE, _REP, E)
    _field(lst, "optional_indices", 2, _F.TYPE_INT32, _REP)
    struct = _message(expr, "CreateStruct", f"{P}.Expr")
    entry = _message(struct, "Entry", f"{P}.Expr.CreateStruct")
    entry.oneof_decl.add(name="key_kind")
    _field(entry, "id", 1, _F.TYPE_INT64)
    _field(entry, "field_key", 2, _F.TYPE_STRING, oneof=0)
    _field(entry, "map_key", 3, _F.TYPE_MESSAGE, type_name=E, oneof=0)
    _field(entry, "value", 4, _F.TYPE_MESSAGE, type_name=E)
    _field(entry, "optional_entry", 5, _F.TYPE_BOOL)
    _field(struct, "message_name", 1, _F.TYPE_STRING)
    _field(struct, "entries", 2, _F.TYPE_MESSAGE, _REP, ".cel.expr.Expr.CreateStruct.Entry")
    comp = _message(expr, "Comprehension", f"{P}.Expr")
    _field(comp, "iter_var", 1, _F.TYPE_STRING)
    _field(comp, "iter_range", 2, _F.TYPE_MESSAGE, type_name=E)
    _field(comp, "accu_var", 3, _F.TYPE_STRING)
    _field(comp, "accu_init", 4, _F.TYPE_MESSAGE, type_name=E)
    _field(comp, "loop_condition", 5, _F.TYPE_MESSAGE, type_name=E)
    _field(comp, "loop_step", 6, _F.TYPE_MESSAGE, type_name=E)
    _field(comp, "result", 7, _F.TYPE_MESSAGE, type_name=E)
    _field(comp, "iter_var2", 8, _F.TYPE_STRING)
    expr.oneof_decl.add(name="expr_kind")
    _field(expr, "id", 2, _F.TYPE_INT64)
    _field(expr, "const_expr", 3, _F.TYPE_MESSAGE, type_name=".cel.expr.Constant", oneof=0)
    _field(expr, "ident_expr", 4, _F.TYPE_MESSAGE, type_name=".cel.expr.Expr.Ident", oneof=0)
    _field(expr, "select_expr", 5, _F.TYPE_MESSAGE, type_name=".cel.expr.Expr.Select", oneof=0)
    _field(expr, "call_expr", 6, _F.TYPE_MESSAGE, type_name=".cel.expr.Expr.Call", oneof=0)
    _field(expr, "list_expr", 7, _F.TYPE_MESSAGE, type_name=".cel.expr.Expr.CreateList", oneof=0)
    _field(expr, "struct_expr", 8, _F.TYPE_MESSAGE, type_name=".cel.expr.Expr.CreateStruct", oneof=0)
    _field(expr, "comprehension_expr", 9, _F.TYPE_MESSAGE, type_name=".cel.expr.Expr.Comprehension", oneof=0)

    src = _message(fdp, "SourceInfo", P)
    _field(src, "syntax_version", 1, _F.TYPE_STRING)
    _field(src, "location", 2, _F.TYPE_STRING)
    _field(src, "line_offsets", 3, _F.TYPE_INT32, _REP)
    _map_field(src, "positions", 4, _F.TYPE_INT64, _F.TYPE_INT32)
    _map_field(src, "macro_calls", 5, _F.TYPE_INT64, _F.TYPE_MESSAGE, E)

    typ = _message(fdp, "Type", P)
    T = ".cel.expr.Type"
    lt = _message(typ, "ListType", f"{P}.Type")
    _field(lt, "elem_type", 1, _F.TYPE_MESSAGE, type_name=T)
    mt = _message(typ, "MapType", f"{P}.Type")
    _field(mt, "key_type", 1, _F.TYPE_MESSAGE, type_name=T)
    _field(mt, "value_type", 2, _F.TYPE_MESSAGE, type_name=T)
    ft = _message(typ, "FunctionType", f"{P}.Type")
    _field(ft, "result_type", 1, _F.TYPE_MESSAGE, type_name=T)
    _field(ft, "arg_types", 2, _F.TYPE_MESSAGE, _REP, T)
    at = _message(typ, "AbstractType", f"{P}.Type")
    _field(at, "name", 1, _F.TYPE_STRING)
    _field(at, "parameter_types", 2, _F.TYPE_MESSAGE, _REP, T)
    typ.oneof_decl.add(name="type_kind")
    _field(typ, "dyn", 1, _F.TYPE_MESSAGE, type_name=".google.protobuf.Empty", oneof=0)
    _field(typ, "null", 2, _F.TYPE_INT32, oneof=0)
    _field(typ, "primitive", 3, _F.TYPE_INT32, oneof=0)
    _field(typ, "wrapper", 4, _F.TYPE_INT32, oneof=0)
    _field(typ, "well_known", 5, _F.TYPE_INT32, oneof=0)
    _field(typ, "list_type", 6, _F.TYPE_MESSAGE, type_name=".cel.expr.Type.ListType", oneof=0)
    _field(typ, "map_type", 7, _F.TYPE_MESSAGE, type_name=".cel.expr.Type.MapType", oneof=0)
    _field(typ, "function", 8, _F.TYPE_MESSAGE, type_name=".cel.expr.Type.FunctionType", oneof=0)
    _field(typ, "message_type", 9, _F.TYPE_STRING, oneof=0)
    _field(typ, "type_param", 10, _F.TYPE_STRING, oneof=0)
    _field(typ, "type", 11, _F.TYPE_MESSAGE, type_name=T, oneof=0)
    _field(typ, "error", 12, _F.TYPE_MESSAGE, type_name=".google.protobuf.Empty", oneof=0)
    _field(typ, "abstract_type", 14, _F.TYPE_MESSAGE, type_name=".cel.expr.Type.AbstractType", oneof=0)

    ref = _message(fdp, "Reference", P)
    _field(ref, "name", 1, _F.TYPE_STRING)
    _field(ref, "overload_id", 3, _F.TYPE_STRING, _REP)
    _field(ref, "value", 4, _F.TYPE_MESSAGE, type_name=".cel.expr.Constant")

    checked = _message(fdp, "CheckedExpr", P)
    _map_field(checked, "reference_map", 2, _F.TYPE_INT64, _F.TYPE_MESSAGE, ".cel.expr.Reference")
    _map_field(checked, "type_map", 3, _F.TYPE_INT64, _F.TYPE_MESSAGE, T)
    _field(checked, "expr", 4, _F.TYPE_MESSAGE, type_name=E)
    _field(checked, "source_info", 5, _F.TYPE_MESSAGE, type_name=".cel.expr.SourceInfo")
    _field(checked, "expr_version", 6, _F.TYPE_STRING)

    parsed = _message(fdp, "ParsedExpr", P)
    _field(parsed, "expr", 2, _F.TYPE_MESSAGE, type_name=E)
    _field(parsed, "source_info", 3, _F.TYPE_MESSAGE, type_name=".cel.expr.SourceInfo")
    return fdp


_AST_POOL = descriptor_pool.DescriptorPool()
_AST_POOL.AddSerializedFile(empty_pb2.DESCRIPTOR.serialized_pb)
_AST_POOL.Add(_ast_file())

CheckedExpr: Any = _mf.GetMessageClass(_AST_POOL.FindMessageTypeByName("cel.expr.CheckedExpr"))
ParsedExpr: Any = _mf.GetMessageClass(_AST_POOL.FindMessageTypeByName("cel.expr.ParsedExpr"))
Expr: Any = _mf.GetMessageClass(_AST_POOL.FindMessageTypeByName("cel.expr.Expr"))
CelType: Any = _mf.GetMessageClass(_AST_POOL.FindMessageTypeByName("cel.expr.Type"))
