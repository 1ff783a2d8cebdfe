"""Whether the target release serves an object's API version at all, from the API lifecycle data
(``data/deprecations/``, :mod:`kubedra.model.lifecycle`): the one error the apiserver gives before any schema,
and the warnings for DRA and scheduling versions that are served only in part."""

from __future__ import annotations

from kubedra.k8s.versions import Version
from kubedra.k8s.workloads import api_group
from kubedra.model.served import lifecycle_db, not_served
from kubedra.validate.rules import Issue

__all__ = ["not_served", "served_warnings"]


def served_warnings(api: str, kind: str, minor: int) -> list[Issue]:
    group = api_group(api)
    version = api.rsplit("/", 1)[-1]
    if group == "resource.k8s.io" and version != "v1":
        entry = lifecycle_db().lookup(api, kind)
        if entry is not None:  # the same sentence audit says (model.lifecycle.Lifecycle.story)
            convert = "; kubedra migrate converts it" if entry.convertible == "kubedra-migrate" else ""
            story = entry.story(Version(1, minor))
            return [Issue(("apiVersion",), f"{api} {kind}: {story}{convert}", True)]
    if group == "scheduling.k8s.io" and version != "v1":
        return [
            Issue(
                ("apiVersion",),
                f"{api} {kind} needs the GenericWorkload feature gate (off by default) and --runtime-config",
                True,
            )
        ]
    return []
