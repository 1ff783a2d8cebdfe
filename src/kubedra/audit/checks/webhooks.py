"""Admission webhooks that stand in the way of a migration wave, and simple ones that could become VAPs."""

from __future__ import annotations

from typing import Any

from kubedra.audit.model import Item, load_data
from kubedra.audit.scope import Context, Scope, check

WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
_DRA_RESOURCES = {
    "resourceclaims",
    "resourceclaimtemplates",
    "deviceclasses",
    "resourceslices",
    "devicetaintrules",
}
_SYSTEM = "kube-system"


def _webhooks(item: Item) -> list[tuple[int, dict[str, Any]]]:
    hooks = item.obj.get("webhooks")
    if not isinstance(hooks, list):
        return []
    return [(i, h) for i, h in enumerate(hooks) if isinstance(h, dict)]


def _rules(hook: dict[str, Any]) -> list[dict[str, Any]]:
    rules = hook.get("rules")
    return [r for r in rules if isinstance(r, dict)] if isinstance(rules, list) else []


def _strs(v: Any) -> list[str]:
    return [str(x) for x in v] if isinstance(v, list) else []


def _matched(hook: dict[str, Any]) -> list[str]:
    """What GPU-relevant resources the webhook intercepts: 'pods', DRA resources, or '*'."""
    out: list[str] = []
    for r in _rules(hook):
        groups, resources = _strs(r.get("apiGroups")), _strs(r.get("resources"))
        for res in resources:
            base = res.split("/")[0]
            if base == "*" and ("*" in groups or "" in groups or "resource.k8s.io" in groups):
                out.append("*")
            elif base == "pods" and ("" in groups or "*" in groups):
                out.append(res)
            elif base in _DRA_RESOURCES and ("resource.k8s.io" in groups or "*" in groups):
                out.append(f"{res}.resource.k8s.io")
    return sorted(set(out))


def _failure_policy(item: Item, hook: dict[str, Any]) -> str:
    default = "Ignore" if item.api_version.endswith("v1beta1") else "Fail"
    return str(hook.get("failurePolicy") or default)


def _timeout(item: Item, hook: dict[str, Any]) -> tuple[int, bool]:
    default = 30 if item.api_version.endswith("v1beta1") else 10
    t = hook.get("timeoutSeconds")
    try:
        return (int(t), False) if t is not None else (default, True)
    except (TypeError, ValueError):
        return default, True


def excludes_kube_system(hook: dict[str, Any]) -> bool:
    """True when the namespaceSelector (or a matchCondition) keeps kube-system out, as far as we can tell."""
    sel = hook.get("namespaceSelector")
    if isinstance(sel, dict):
        if sel.get("matchLabels"):
            return True  # opt-in by label: kube-system is out unless someone labelled it
        for expr in sel.get("matchExpressions") or []:
            if not isinstance(expr, dict):
                continue
            op, values = expr.get("operator"), _strs(expr.get("values"))
            if op == "NotIn" and _SYSTEM in values:
                return True
            if op == "In" and _SYSTEM not in values:
                return True
            if op == "Exists":
                return True
    for cond in hook.get("matchConditions") or []:
        if isinstance(cond, dict) and _SYSTEM in str(cond.get("expression", "")):
            return True
    obj_sel = hook.get("objectSelector")
    return isinstance(obj_sel, dict) and bool(obj_sel.get("matchLabels"))


def _slow_threshold() -> int:
    return int(load_data("cluster-features.yaml").get("webhookSlowTimeoutSeconds", 5))


@check(
    "webhook.matches-gpu-workloads",
    "webhook.fail-closed-slow",
    "webhook.no-system-exclusion",
    "webhook.vap-candidate",
)
def webhooks(ctx: Context, scope: Scope) -> None:
    items = scope.kind(*WEBHOOK_KINDS)
    if not items:
        return
    slow = _slow_threshold()
    for item in items:
        mutating = item.kind.startswith("Mutating")
        for i, hook in _webhooks(item):
            name = str(hook.get("name") or f"webhooks[{i}]")
            matched = _matched(hook)
            policy = _failure_policy(item, hook)
            timeout, defaulted = _timeout(item, hook)
            if matched:
                ctx.emit(
                    "webhook.matches-gpu-workloads",
                    item,
                    f"{'mutating' if mutating else 'validating'} webhook {name} intercepts {', '.join(matched)}",
                    path=("webhooks", i, "rules"),
                    severity="warning" if mutating and policy == "Fail" else None,
                )
            if policy == "Fail" and timeout > slow:
                ctx.emit(
                    "webhook.fail-closed-slow",
                    item,
                    f"webhook {name}: failurePolicy Fail, timeoutSeconds {timeout}{' (default)' if defaulted else ''}",
                    path=("webhooks", i, "timeoutSeconds" if not defaulted else "failurePolicy"),
                    timeout=timeout,
                )
            if matched and not excludes_kube_system(hook):
                ctx.emit(
                    "webhook.no-system-exclusion",
                    item,
                    f"webhook {name} matches {', '.join(matched)} in every namespace, kube-system included",
                    path=("webhooks", i, "namespaceSelector")
                    if "namespaceSelector" in hook
                    else ("webhooks", i),
                )
            if not mutating and _vap_candidate(hook):
                ctx.emit(
                    "webhook.vap-candidate",
                    item,
                    f"validating webhook {name}: {_rule_summary(hook)}, sideEffects {hook.get('sideEffects')}",
                    path=("webhooks", i),
                )


def _vap_candidate(hook: dict[str, Any]) -> bool:
    if str(hook.get("sideEffects")) not in ("None", "NoneOnDryRun"):
        return False
    resources = [res for r in _rules(hook) for res in _strs(r.get("resources"))]
    if not resources or len(resources) > 3 or any(res.startswith("*") for res in resources):
        return False
    ops = {op for r in _rules(hook) for op in _strs(r.get("operations"))}
    return "CONNECT" not in ops and "*" not in ops


def _rule_summary(hook: dict[str, Any]) -> str:
    parts = []
    for r in _rules(hook):
        parts.append(f"{'/'.join(_strs(r.get('operations')))} {','.join(_strs(r.get('resources')))}")
    return "; ".join(parts)
