"""A claim's AllocationResult from what the search picked: results, configs, node selector."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubedra.allocator.errors import (
    AllocationError,
)
from kubedra.allocator.requests import DeviceResult, ReqData
from kubedra.model.objects import (
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceRequestAllocationResult,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)

if TYPE_CHECKING:
    from kubedra.allocator.search import Search


def build_result(self: Search, ci: int) -> AllocationResult:  # noqa: C901 - one AllocationResult field after another, like upstream's allocator
    """The AllocationResult of claim ``ci`` from the devices the search picked (configs, node selector)."""
    claim = self.claims[ci]
    f = self.f
    out = AllocationResult()
    for res in self.results[ci]:
        d = res.dev.device
        out.results.append(
            DeviceRequestAllocationResult(
                request=res.req.full_name,
                driver=res.dev.id[0],
                pool=res.dev.id[1],
                device=res.dev.id[2],
                admin_access=res.admin,
                tolerations=list(res.req.tolerations),
                binding_conditions=list(d.binding_conditions) if f.device_binding_and_status else [],
                binding_failure_conditions=list(d.binding_failure_conditions)
                if f.device_binding_and_status
                else [],
                share_id=res.share_id,
                consumed_capacity=dict(res.consumed) if res.consumed else None,
                skip_node_operations=list(res.dev.slice.skip_node_operations) if self.experimental else [],
            )
        )
    # configs: each class's configs once (FromClass), then the claim's (FromClaim)
    selected: list[ReqData] = []
    for ri in range(len(claim.spec.requests)):
        rd = self.req_data[(ci, ri, 0)]
        if rd.is_sub:
            rd = self.req_data[(ci, ri, rd.selected_sub)]
        selected.append(rd)
    by_class: dict[str, tuple[int, int]] = {}
    for rd in selected:
        cls = rd.cls
        if cls is None:
            continue
        if cls.name in by_class:
            lo, hi = by_class[cls.name]
            for i in range(lo, hi):
                out.config[i].requests.append(rd.req.full_name)
            continue
        lo = len(out.config)
        for o in cls.config:
            out.config.append(DeviceAllocationConfiguration("FromClass", [rd.req.full_name], o))
        by_class[cls.name] = (lo, len(out.config))
    for cfg in claim.spec.config:
        if not cfg.requests:
            out.config.append(DeviceAllocationConfiguration("FromClaim", [], cfg.opaque))
            continue
        # v0.37 adds a claim config once; v0.36 (1.36) once per request it names
        once = self.a.clears_all_request_configs
        for ri, r in enumerate(claim.spec.requests):
            if r.name in cfg.requests:
                out.config.append(DeviceAllocationConfiguration("FromClaim", list(cfg.requests), cfg.opaque))
                if once:
                    break
                continue
            rd = selected[ri]
            if not rd.is_sub:
                continue
            if rd.req.full_name in cfg.requests:
                out.config.append(DeviceAllocationConfiguration("FromClaim", list(cfg.requests), cfg.opaque))
                if once:
                    break
    # v0.37 clears the requests of a config that applies to every request ("empty means all"); the
    # 1.36 allocator (v0.36) keeps them
    for c in out.config if self.a.clears_all_request_configs else ():
        if not c.requests:
            continue
        if all(
            r.name in c.requests or (rd.is_sub and rd.req.full_name in c.requests)
            for r, rd in zip(claim.spec.requests, selected, strict=True)
        ):
            c.requests = []
    try:
        out.node_selector = _node_selector(self.results[ci], self.node.name)
    except ValueError as e:
        raise AllocationError(f"create NodeSelector for claim {claim.meta.name}: {e}") from None
    return out


def _node_selector(results: list[DeviceResult], node_name: str) -> NodeSelector | None:
    term = NodeSelectorTerm()
    for res in results:
        s = res.dev.slice
        d = res.dev.device
        if s.per_device_node_selection:
            node = d.node_name
            sel = d.node_selector
        else:
            node = s.node_name
            sel = s.node_selector
        if node is not None or d.binds_to_node:
            return NodeSelector(
                terms=[
                    NodeSelectorTerm(
                        match_fields=[NodeSelectorRequirement("metadata.name", "In", [node_name])]
                    )
                ]
            )
        if sel is not None:
            if len(sel.terms) == 1:
                _merge(sel.terms[0].match_fields, term.match_fields)
                _merge(sel.terms[0].match_expressions, term.match_expressions)
            elif len(sel.terms) > 1:
                raise ValueError(f"unsupported ResourceSlice.NodeSelector with {len(sel.terms)} terms")
    if term.match_fields or term.match_expressions:
        return NodeSelector(terms=[term])
    return None


def _merge(src: list[NodeSelectorRequirement], dst: list[NodeSelectorRequirement]) -> None:
    for r in src:
        if not any(
            x.key == r.key and x.operator == r.operator and set(x.values) == set(r.values) for x in dst
        ):
            dst.append(r)
