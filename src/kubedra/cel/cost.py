"""Static worst-case cost of a checked CEL expression, after cel-go's ``checker.Cost`` and apiserver's
``library.CostEstimator`` (plus the DRA ``includes`` estimate and device size estimator).

How exact this is: the walk is a port of cel-go v0.28 ``checker/cost.go`` (ident/select/call/list/map/struct/
comprehension/bind rules, string equality and ordering, ``in`` on lists, ``matches``/``contains``/``startsWith``,
``&&``/``||``/ternary, list concatenation) and of apiserver's per-function estimates for the Kubernetes
libraries (lists, strings ext, regex, quantity, semver, IP/CIDR, URL, format). The checked AST comes from
cel-cpp, whose macro expansions match cel-go's for ``all``/``exists``/``exists_one``/``map``/``filter`` and
``cel.bind``, so the upstream DRA ``expectCost`` figures are reproduced (see tests/conformance/cel). Not ported:
cel-go ext.Lists v3/ext.Strings per-function estimators beyond the ones apiserver overrides (they fall back to
cost 1 + arguments), and two-variable comprehension sizes for map values (estimated like single-variable ones).
Unknown sizes are ``2**64-1`` like upstream, so an expression over unbounded data reports the maximum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubedra.cel import _protos
from kubedra.cel.costmodel import (
    LIST_CREATE,
    MAP_CREATE,
    MAX,
    MAX_NAME_FORMAT_REGEX_SIZE,
    ONE,
    REGEX_LENGTH,
    STRING_TRAVERSAL,
    STRUCT_CREATE,
    UNKNOWN,
    Est,
    SizeFn,
    dra_device_sizes,
    is_scalar,
    is_sized,
    sat_add,
    sat_mul,
    type_kind,
)

_OPTIONAL_PASS_THROUGH = frozenset(
    {
        "select_optional_field",
        "map_optindex_optional_value",
        "optional_map_optindex_optional_value",
        "list_optindex_optional_int",
        "optional_list_optindex_optional_int",
        "optional_of",
        "optional_ofNonZeroValue",
        "optional_value",
        "optional_orValue_value",
        "optional_or_optional",
    }
)


@dataclass
class _Local:
    path: list[str]
    size: Est | None
    entry: tuple[str, Est, Est] | None  # (container kind, key size, value size)


@dataclass
class Coster:
    checked: Any
    sizes: SizeFn
    presence_cost: Est = field(default_factory=lambda: Est(0, 0))  # PresenceTestHasCost(false)
    # actual=True: the walk stands in for cel-go's runtime CostTracker on one input (``sizes`` gives that
    # input's sizes). Values follow the tracker's ``actualSize``: strings, bytes, lists and maps have their
    # size, an optional the size of its value, everything else (numbers, types, quantities, ...) 1; the
    # optional operators (``.?f``, ``[?k]``, ``orValue``, ``value``, ``optional.of``) pass sizes through.
    actual: bool = False
    paths: dict[int, list[str]] = field(default_factory=dict)
    computed: dict[int, Est] = field(default_factory=dict)
    entries: dict[int, tuple[str, Est, Est]] = field(default_factory=dict)
    scopes: dict[str, list[_Local]] = field(default_factory=dict)

    # -------------------------------------------------------------- helpers
    def type_of(self, e: Any) -> Any:
        type_map = getattr(self.checked, "type_map", None)  # absent on an unchecked (parsed-only) AST
        return type_map.get(e.id) if type_map is not None else None

    def overloads(self, e: Any) -> list[str]:
        refs = getattr(self.checked, "reference_map", None)
        if refs is None:
            return [e.call_expr.function]  # unchecked AST: the function name stands in for the overload
        ref = refs.get(e.id)
        return list(ref.overload_id) if ref is not None else []

    def peek(self, name: str) -> _Local | None:
        stack = self.scopes.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, local: _Local) -> None:
        self.scopes.setdefault(name, []).append(local)

    def pop(self, name: str) -> None:
        self.scopes[name].pop()

    def path_of(self, e: Any) -> list[str]:
        if e.WhichOneof("expr_kind") == "ident_expr":
            v = self.peek(e.ident_expr.name)
            if v is not None:
                return list(v.path)
        return list(self.paths.get(e.id, []))

    def compute_size(self, e: Any) -> Est | None:
        if e.id in self.computed:
            return self.computed[e.id]
        kind = e.WhichOneof("expr_kind")
        if kind == "const_expr":
            c = e.const_expr
            ck = c.WhichOneof("constant_kind")
            if ck == "string_value":
                return Est(len(c.string_value), len(c.string_value))
            if ck == "bytes_value":
                return Est(len(c.bytes_value), len(c.bytes_value))
            return Est(1, 1)
        if kind == "list_expr":
            n = len(e.list_expr.elements)
            return Est(n, n)
        if kind == "struct_expr" and not e.struct_expr.message_name:
            n = len(e.struct_expr.entries)
            return Est(n, n)
        path = self.path_of(e)
        if path and not path[0].startswith("@"):
            sz = self.sizes(path)
            if sz is not None:
                self.computed[e.id] = sz
                return sz
        if is_scalar(self.type_of(e)) or (self.actual and is_sized(self.type_of(e)) is False):
            return Est(1, 1)
        if kind == "ident_expr":
            v = self.peek(e.ident_expr.name)
            if v is not None and v.size is not None:
                return v.size
        return None

    def size_or_unknown(self, e: Any) -> Est:
        s = self.compute_size(e)
        return s if s is not None else UNKNOWN

    def entry_size(self, e: Any) -> tuple[str, Est, Est] | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if e.WhichOneof("expr_kind") == "ident_expr":
            v = self.peek(e.ident_expr.name)
            if v is not None:
                return v.entry
        return None

    # -------------------------------------------------------------- walk
    def cost(self, e: Any) -> Est:
        kind = e.WhichOneof("expr_kind")
        if kind == "const_expr" or kind is None:
            return Est(0, 0)
        if kind == "ident_expr":
            v = self.peek(e.ident_expr.name)
            self.paths[e.id] = list(v.path) if v is not None else [e.ident_expr.name]
            return ONE
        if kind == "select_expr":
            sel = e.select_expr
            if sel.test_only:
                return self.presence_cost.add(self.cost(sel.operand))
            total = self.cost(sel.operand)
            if type_kind(self.type_of(sel.operand)) in ("map", "struct", "typeparam"):
                total = total.add(ONE)
            self.paths[e.id] = [*self.path_of(sel.operand), sel.field]
            return total
        if kind == "call_expr":
            return self.cost_call(e)
        if kind == "list_expr":
            total = Est()
            item = Est(MAX, 0) if e.list_expr.elements else Est(0, 0)
            for el in e.list_expr.elements:
                total = total.add(self.cost(el))
                item = item.union(self.size_or_unknown(el))
            self.entries[e.id] = ("list", Est(1, 1), item)
            return total.add(Est(LIST_CREATE, LIST_CREATE))
        if kind == "struct_expr":
            st = e.struct_expr
            total = Est()
            if st.message_name:
                for ent in st.entries:
                    total = total.add(self.cost(ent.value))
                return total.add(Est(STRUCT_CREATE, STRUCT_CREATE))
            ks = Est(MAX, 0) if st.entries else Est(0, 0)
            vs = Est(MAX, 0) if st.entries else Est(0, 0)
            for ent in st.entries:
                total = total.add(self.cost(ent.map_key)).add(self.cost(ent.value))
                ks = ks.union(self.size_or_unknown(ent.map_key))
                vs = vs.union(self.size_or_unknown(ent.value))
            self.entries[e.id] = ("map", ks, vs)
            return total.add(Est(MAP_CREATE, MAP_CREATE))
        if kind == "comprehension_expr":
            return self.cost_comprehension(e)
        return Est()

    def cost_comprehension(self, e: Any) -> Est:
        c = e.comprehension_expr
        is_bind = (
            c.iter_range.WhichOneof("expr_kind") == "list_expr"
            and not c.iter_range.list_expr.elements
            and c.loop_condition.WhichOneof("expr_kind") == "const_expr"
            and c.loop_condition.const_expr.WhichOneof("constant_kind") == "bool_value"
            and not c.loop_condition.const_expr.bool_value
            and c.accu_var not in ("@result", "__result__")
        )
        total = self.cost(c.iter_range).add(self.cost(c.accu_init))
        self.push(
            c.accu_var,
            _Local(self.path_of(c.accu_init), self.compute_size(c.accu_init), self.entry_size(c.accu_init)),
        )
        if is_bind:
            total = total.add(self.cost(c.result))
            self.pop(c.accu_var)
            if (s := self.compute_size(c.result)) is not None:
                self.computed[e.id] = s
            if (en := self.entry_size(c.result)) is not None:
                self.entries[e.id] = en
            return total
        entry = self.entry_size(c.iter_range)
        container = entry[0] if entry else type_kind(self.type_of(c.iter_range))
        range_path = self.path_of(c.iter_range)
        if c.iter_var2:
            self.push(
                c.iter_var,
                _Local(
                    [*range_path, "@indices" if container == "list" else "@keys"],
                    entry[1] if entry else None,
                    None,
                ),
            )
            self.push(
                c.iter_var2,
                _Local(
                    [*range_path, "@items" if container == "list" else "@values"],
                    entry[2] if entry else None,
                    None,
                ),
            )
        else:
            if container == "list":
                self.push(c.iter_var, _Local([*range_path, "@items"], entry[2] if entry else None, None))
            else:
                self.push(c.iter_var, _Local([*range_path, "@keys"], entry[1] if entry else None, None))
        loop = self.cost(c.loop_condition)
        step = self.cost(c.loop_step)
        self.pop(c.iter_var)
        if c.iter_var2:
            self.pop(c.iter_var2)
        total = total.add(self.cost(c.result))
        self.pop(c.accu_var)
        count = self.size_or_unknown(c.iter_range)
        total = total.add(count.mul(step.add(loop)))
        ak = c.accu_init.WhichOneof("expr_kind")
        if ak == "const_expr":
            if (s := self.compute_size(c.accu_init)) is not None:
                self.computed[e.id] = s
        elif ak in ("list_expr", "struct_expr"):
            self.computed[e.id] = count
            if (en := self.entry_size(c.loop_step)) is not None:
                self.entries[e.id] = en
        return total

    def cost_call(self, e: Any) -> Est:
        call = e.call_expr
        args = list(call.args)
        if call.function == "dyn" and len(args) == 1:
            c = self.cost(args[0])
            if (s := self.compute_size(args[0])) is not None:
                self.computed[e.id] = s
            if (en := self.entry_size(args[0])) is not None:
                self.entries[e.id] = en
            return Est(1, 1).add(c)
        arg_costs = [self.cost(a) for a in args]
        ids = self.overloads(e)
        if not ids:
            return Est()
        total = Est()
        target = None
        if call.HasField("target"):
            total = total.add(self.cost(call.target))
            target = call.target
        fn = Est(MAX, 0)
        result_size: Est | None = None
        for oid in ids:
            est, rsize = self.function_cost(e, call.function, oid, target, args, arg_costs)
            fn = fn.union(est)
            if rsize is not None:
                result_size = rsize if result_size is None else result_size.union(rsize)
            if oid in ("index_list", "index_map") and args:
                en = self.entry_size(args[0])
                result_size = en[2] if en else None
                step = "@items" if oid == "index_list" else "@values"
                parent = self.path_of(args[0])
                key = args[1] if len(args) > 1 else None
                if (  # DRA's device maps under a constant key: bounded where a run-time key is not (costmodel)
                    step == "@values"
                    and not self.actual
                    and parent[:1] == ["device"]
                    and key is not None
                    and key.WhichOneof("expr_kind") == "const_expr"
                ):
                    step = "@const"
                self.paths[e.id] = [*parent, step]
            if self.actual and oid in _OPTIONAL_PASS_THROUGH:
                result_size = self.optional_size(e, oid, target, args)
            if result_size is None:
                result_size = self.compute_size(e)
        if result_size is not None:
            self.computed[e.id] = result_size
        return total.add(fn)

    def optional_size(self, e: Any, oid: str, target: Any, args: list[Any]) -> Est | None:
        """Actual-mode size (and path) of an optional operator's result: the size of the value it carries."""
        if oid == "select_optional_field" and len(args) == 2:
            self.paths[e.id] = [*self.path_of(args[0]), args[1].const_expr.string_value]
            return self.compute_size(e)
        if oid in ("map_optindex_optional_value", "optional_map_optindex_optional_value") and len(args) == 2:
            key = args[1]
            const = key.WhichOneof("expr_kind") == "const_expr" and key.const_expr.HasField("string_value")
            self.paths[e.id] = [*self.path_of(args[0]), key.const_expr.string_value if const else "@values"]
            return self.compute_size(e)
        if oid in ("list_optindex_optional_int", "optional_list_optindex_optional_int") and len(args) == 2:
            self.paths[e.id] = [*self.path_of(args[0]), "@items"]
            return self.compute_size(e)
        if oid in ("optional_of", "optional_ofNonZeroValue") and len(args) == 1:
            self.paths[e.id] = self.path_of(args[0])
            return self.compute_size(args[0])
        if oid == "optional_value" and target is not None:
            self.paths[e.id] = self.path_of(target)
            return self.compute_size(target)
        if oid in ("optional_orValue_value", "optional_or_optional") and target is not None and args:
            a, b = self.compute_size(target), self.compute_size(args[0])
            return a.union(b) if a is not None and b is not None else None
        return None

    # -------------------------------------------------------------- per-function estimates
    def function_cost(  # noqa: C901 - port of cel-go checker/cost.go functionCost, one branch per overload
        self, e: Any, fn: str, oid: str, target: Any, args: list[Any], costs: list[Est]
    ) -> tuple[Est, Est | None]:
        argsum = Est()
        for c in costs:
            argsum = argsum.add(c)
        k8s = self.k8s_cost(fn, oid, target, args)
        if k8s is not None:
            return k8s[0].add(argsum), k8s[1]
        if oid == "string_format" and target is not None:  # ext strings format
            return self.size_or_unknown(target).factor(STRING_TRAVERSAL).add(argsum), None
        if oid == "string_to_bytes" and len(args) == 1:
            sz = self.size_or_unknown(args[0])
            return sz.factor(STRING_TRAVERSAL).add(argsum), Est(sz.lo, sat_mul(sz.hi, 4))
        if oid == "bytes_to_string" and len(args) == 1:
            sz = self.size_or_unknown(args[0])
            return sz.factor(STRING_TRAVERSAL).add(argsum), Est(sz.lo // 4, sz.hi)
        if oid == "strings_quote" and len(args) == 1:
            sz = self.size_or_unknown(args[0])
            return sz.factor(STRING_TRAVERSAL).add(argsum), Est(
                sat_add(sz.lo, 2), sat_add(sat_mul(sz.hi, 2), 2)
            )
        if oid in ("starts_with_string", "ends_with_string", "starts_with", "ends_with") and len(args) == 1:
            return self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL).add(argsum), None
        if oid == "in_list" and len(args) == 2:
            return self.size_or_unknown(args[1]).factor(1).add(argsum), None
        if oid in ("matches_string", "matches") and target is not None and len(args) == 1:
            s = self.size_or_unknown(target).add(ONE).factor(STRING_TRAVERSAL)
            r = self.size_or_unknown(args[0]).factor(REGEX_LENGTH)
            return s.mul(r).add(argsum), None
        if oid in ("contains_string", "contains") and target is not None and len(args) == 1:
            s = self.size_or_unknown(target).factor(STRING_TRAVERSAL)
            sub = self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL)
            return s.mul(sub).add(argsum), None
        if oid in ("logical_or", "logical_and"):
            return Est(costs[0].lo, costs[0].add(costs[1]).hi), None
        if oid == "conditional":
            size = self.size_or_unknown(args[1]).union(self.size_or_unknown(args[2]))
            a, b = self.entry_size(args[1]), self.entry_size(args[2])
            if a is not None and b is not None:
                self.entries[e.id] = (a[0], a[1].union(b[1]), a[2].union(b[2]))
            return costs[0].add(costs[1].union(costs[2])), size
        if oid in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = self.size_or_unknown(args[0]).add(self.size_or_unknown(args[1]))
            a, b = self.entry_size(args[0]), self.entry_size(args[1])
            if a is not None and b is not None:
                self.entries[e.id] = (a[0], a[1].union(b[1]), a[2].union(b[2]))
            if oid == "add_list":
                return ONE.add(argsum), size
            return size.factor(STRING_TRAVERSAL).add(argsum), size
        if (
            oid.startswith(("less_string", "greater_string", "less_equals_string", "greater_equals_string"))
            or oid.startswith(("less_bytes", "greater_bytes", "less_equals_bytes", "greater_equals_bytes"))
            or oid in ("equals", "not_equals")
        ):
            lhs, rhs = self.size_or_unknown(args[0]), self.size_or_unknown(args[1])
            smallest = min(lhs.hi, rhs.hi)
            return Est(1 if smallest > 0 else 0, smallest).factor(STRING_TRAVERSAL).add(argsum), None
        return ONE.add(argsum), None

    def k8s_cost(self, fn: str, oid: str, target: Any, args: list[Any]) -> tuple[Est, Est | None] | None:  # noqa: C901 - port of apiserver CostEstimator.EstimateCallCost, one branch per function
        """apiserver library.CostEstimator.EstimateCallCost (+ DRA's includes)."""
        if fn == "includes" and oid == "dra_includes_dyn_dyn" and target is not None:
            return Est(0, 48), None
        if (
            fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes")
            and target is not None
        ):
            el = ONE
            en = self.entry_size(target)
            t = self.type_of(target)
            elem_kind = type_kind(t.list_type.elem_type) if t is not None and type_kind(t) == "list" else None
            if elem_kind is not None or en is not None:
                if elem_kind in ("string", "bytes"):
                    esz = en[2] if en else self.sizes([*self.path_of(target), "@items"]) or UNKNOWN
                    el = el.add(esz.factor(STRING_TRAVERSAL))
                return self.size_or_unknown(target).mul(el), None
            if fn == "includes":
                return self.size_or_unknown(target).mul(el), None
            return self.size_or_unknown(target).factor(STRING_TRAVERSAL), None
        if fn in ("url",) and len(args) == 1:
            sz = self.size_or_unknown(args[0])
            return sz.factor(STRING_TRAVERSAL), sz
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            sz = self.size_or_unknown(target)
            return sz.factor(STRING_TRAVERSAL), sz
        if fn == "replace" and target is not None and len(args) >= 2:
            sz = self.size_or_unknown(target)
            return sz.factor(2 * STRING_TRAVERSAL), None
        if fn == "split" and target is not None:
            sz = self.size_or_unknown(target)
            hi = sz.hi
            if len(args) > 1 and args[1].WhichOneof("expr_kind") == "const_expr":
                hi = args[1].const_expr.int64_value
            return sz.factor(2 * STRING_TRAVERSAL), Est(0, hi)
        if fn == "join" and target is not None:
            lsz = self.size_or_unknown(target)
            en = self.entry_size(target)
            sz = lsz.mul(en[2]) if en else Est()
            if args:
                sep = self.size_or_unknown(args[0])
                sz = sz.add(sep.mul(Est(max(lsz.lo - 1, 0), max(lsz.hi - 1, 0) if lsz.hi < MAX else MAX)))
            return sz.factor(STRING_TRAVERSAL), sz
        if fn in ("find", "findAll") and target is not None and args:
            sz = self.size_or_unknown(target)
            s = sz.add(ONE).factor(STRING_TRAVERSAL)
            r = self.size_or_unknown(args[0]).factor(REGEX_LENGTH)
            return s.mul(r), Est(0, sz.hi)
        if fn in ("cidr", "isIP", "isCIDR") and args:
            return self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL), None
        if fn == "ip":
            if oid == "cidr_ip":
                return ONE, None
            if args:
                return self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL), None
        if fn == "ip.isCanonical" and args:
            return self.size_or_unknown(args[0]).factor(2 * STRING_TRAVERSAL), None
        if fn in (
            "masked",
            "prefixLength",
            "family",
            "isUnspecified",
            "isLoopback",
            "isLinkLocalMulticast",
            "isLinkLocalUnicast",
            "isGlobalUnicast",
        ):
            return ONE, None
        if fn == "containsIP" and args:
            c = Est(4, 16).add(Est(4, 16)).factor(STRING_TRAVERSAL)
            if oid == "cidr_contains_ip_string":
                c = c.add(self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL))
            return c, None
        if fn == "containsCIDR" and args:
            c = (
                Est(4, 16)
                .add(Est(4, 16))
                .factor(STRING_TRAVERSAL)
                .add(Est(4, 16).factor(STRING_TRAVERSAL))
                .add(ONE)
            )
            if oid == "cidr_contains_cidr_string":
                c = c.add(self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL))
            return c, None
        if fn in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL), None
        if fn == "validate" and args:
            return self.size_or_unknown(args[0]).factor(STRING_TRAVERSAL).factor(
                MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH
            ), None
        if fn in (
            "format.named",
            "sign",
            "asInteger",
            "isInteger",
            "asApproximateFloat",
            "isGreaterThan",
            "isLessThan",
            "compareTo",
            "add",
            "sub",
            "major",
            "minor",
            "patch",
        ):
            if fn in ("add", "sub") and oid in ("add_int64", "add_uint64", "add_double", "subtract_int64"):
                return None
            return ONE, None
        if fn in ("getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery"):
            return ONE, None
        if fn == "_==_" and len(args) == 2:
            lt, rt = self.type_of(args[0]), self.type_of(args[1])
            objects = (_protos.QUANTITY_TYPE, _protos.SEMVER_TYPE, _protos.IP_TYPE, _protos.CIDR_TYPE)
            if lt is not None and lt == rt and type_kind(lt) == "struct" and lt.message_type in objects:
                return ONE, None
        return None


def estimate(checked: Any, sizes: SizeFn = dra_device_sizes) -> int:
    """Worst-case cost (cel-go ``CostEstimate.Max``) of a decoded ``cel.expr.CheckedExpr``."""
    return Coster(checked, sizes).cost(checked.expr).hi
