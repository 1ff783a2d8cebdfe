"""API lifecycle data: moved to :mod:`kubedra.model.lifecycle` (audit and validate share it)."""

from kubedra.model.lifecycle import BUILTIN_FILES as BUILTIN_FILES
from kubedra.model.lifecycle import DeprecationDB as DeprecationDB
from kubedra.model.lifecycle import Lifecycle as Lifecycle
