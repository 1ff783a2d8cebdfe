"""``kubedra discover``: the ResourceSlices the NVIDIA DRA driver would publish for a node's real GPUs."""
