"""Which component of NVIDIA's k8s-device-plugin a container runs, from its image and command.

The k8s-device-plugin image also runs GPU feature discovery and the MPS control daemon; the container's command
tells them apart (deployments/static and gpu-operator assets, NVIDIA/k8s-device-plugin @ 1b826acc).
"""

from __future__ import annotations

import re

_IMAGE = re.compile(r"^(k8s-device-plugin|nvidia-device-plugin|device-plugin)(:|@|$)")
_OTHER_COMPONENTS = {
    "gpu-feature-discovery": "GPU feature discovery",
    "mps-control-daemon": "MPS control daemon",
}


def component(image: str, command: str) -> str | None:
    """'device plugin', 'GPU feature discovery' or 'MPS control daemon'; None: not NVIDIA's image."""
    low = image.lower()
    if "nvidia" not in low or not _IMAGE.match(low.rsplit("/", 1)[-1]):
        return None
    return _OTHER_COMPONENTS.get(command.rsplit("/", 1)[-1], "device plugin")
