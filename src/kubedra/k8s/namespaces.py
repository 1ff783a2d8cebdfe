"""The namespace an object of the input lands in, for every reference check (claims, claim templates, PodGroups,
Workloads, ConfigMaps, owners...).

A namespaced object without ``metadata.namespace`` is created in the namespace of the request: kubectl sends it
to its ``--namespace``, else the kubeconfig context's namespace, else ``default`` (k8s.io/client-go
tools/clientcmd ``DirectClientConfig.Namespace``: "default" when none is set; kubectl apply/create then send it to
``/api/v1/namespaces/<that>/...``). So ``namespace: default`` and an omitted namespace are one namespace: every
verb keys objects by :func:`effective`, never by the raw field (an omitted namespace as ``""`` made a claim template
in ``default`` "not among the inputs" for a pod that omits it). Verbs without a ``--namespace`` flag read the
input as kubectl would with no context namespace: ``default``.
"""

from __future__ import annotations

DEFAULT = "default"


def effective(namespace: object, default: str = DEFAULT) -> str:
    """``namespace`` as written (``metadata.namespace``), or the input's namespace when it is omitted or empty."""
    return str(namespace) if namespace else default
