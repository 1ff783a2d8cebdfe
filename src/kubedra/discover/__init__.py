"""``kubedra discover``: the ResourceSlices a GPU vendor's DRA driver would publish for a node's real GPUs (NVIDIA from nvidia-smi or NVML, AMD from amd-smi)."""
