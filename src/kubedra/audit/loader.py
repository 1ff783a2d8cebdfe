"""Bulk manifest reading for audit.

The fast paths that audit needed for 10,000+ manifests (cached scalar resolution, direct node conversion,
no garbage collection while building) now live in :mod:`kubedra.sources.files`, so every verb reads the same
way; this module keeps audit's names for them.
"""

from __future__ import annotations

from kubedra.sources.files import load_each, parse_text

__all__ = ["load_each", "parse_text"]
