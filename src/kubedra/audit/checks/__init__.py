"""Detection functions, one small function per rule id (metadata in data/rules/audit-rules.yaml).

Importing this package registers every check with :func:`kubedra.audit.engine.check`.
"""

from kubedra.audit.checks import (
    apis,
    cluster_config,
    crds,
    dra_health,
    duplicates,
    gpu,
    selectors,
    target_fields,
    webhooks,
)

__all__ = [
    "apis",
    "cluster_config",
    "crds",
    "dra_health",
    "duplicates",
    "gpu",
    "selectors",
    "target_fields",
    "webhooks",
]
