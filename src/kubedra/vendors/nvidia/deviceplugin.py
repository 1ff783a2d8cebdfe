"""Which component of NVIDIA's k8s-device-plugin image a container runs, from its image and command.

The k8s-device-plugin image also runs GPU feature discovery, the MPS control daemon and the charts' config-manager
sidecar; the container's command tells them apart. The facts are those of :mod:`kubedra.vendors.nvidia.daemonsets`
(``data/nvidia-daemonsets.yaml``, with its sources); this module only restricts them to the plugin's image.
"""

from __future__ import annotations

import re

from kubedra.vendors.nvidia import daemonsets

_IMAGE = re.compile(r"^(k8s-device-plugin|nvidia-device-plugin|device-plugin)(:|@|$)")


def component(image: str, command: str) -> str | None:
    """'device plugin', 'GPU feature discovery', 'MPS control daemon' or 'device-plugin config manager' (the title
    of :func:`daemonsets.container_component`); None: not NVIDIA's device-plugin image."""
    low = image.lower()
    if "nvidia" not in low or not _IMAGE.match(low.rsplit("/", 1)[-1]):
        return None
    found = daemonsets.container_component({"image": image, "command": [command] if command else []})
    return found.title if found is not None else "device plugin"
