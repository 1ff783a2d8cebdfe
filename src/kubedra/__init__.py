"""kubedra: carry a Kubernetes GPU fleet from the NVIDIA device plugin to DRA, and prove each step."""

__version__ = "0.1.0"
