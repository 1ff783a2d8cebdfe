"""``kubedra verify``: post-wave checks of a cluster (live or a snapshot), see :mod:`.checks`."""
