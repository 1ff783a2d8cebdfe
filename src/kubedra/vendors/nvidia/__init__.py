"""A catalogue of NVIDIA GPU nodes: what the NVIDIA DRA driver and the NVIDIA device plugin publish.

Everything returns plain, JSON-serialisable Kubernetes objects (camelCase dicts: core/v1 Node,
resource.k8s.io/v1 ResourceSlice and DeviceClass), so callers feed them through the same loader
as user manifests.

    from kubedra.vendors.nvidia import dra, nodes
    from kubedra.vendors.nvidia.cluster import cluster
    cluster("4x8xH100-80GB,2x8xA100-80GB", "mig-static:all-balanced", "1.37", device_plugin=False)
    dra.dra_objects("h100-80gb-0", "H100-80GB", 8, "mig-dynamic")      # 9 slices, 208 devices
    nodes.device_plugin_node("a100-80gb-0", "A100-80GB", 8, "mig-static:all-1g.10gb")

Modes: ``full``, ``mig-static:<layout>``, ``mig-dynamic``, ``time-slicing:<n>``, ``mps:<n>``
(see :mod:`kubedra.vendors.nvidia.modes` and :mod:`kubedra.vendors.nvidia.layouts`).

The package itself imports nothing: importing one of its modules (``names`` for a check of ``kubedra audit``)
does not load the whole catalogue. Import the module that holds what you use.
"""
