"""Kubernetes minor versions: moved to :mod:`kubedra.model.apiversions` (audit and validate share them)."""

from kubedra.model.apiversions import Version as Version
from kubedra.model.apiversions import split_api_version as split_api_version
from kubedra.model.apiversions import version_rank as version_rank
