"""Helm release Secrets are decoded within bounds: a gzip bomb is one unreadable release (a
ValueError the callers record as not read), never a MemoryError."""

from __future__ import annotations

import base64
import gzip
import time

import pytest

from kubedra.sources import helm


def secret(payload: bytes) -> dict:
    inner = base64.b64encode(gzip.compress(payload, compresslevel=9))
    return {
        "metadata": {"name": "sh.helm.release.v1.x.v1", "namespace": "ns"},
        "data": {"release": base64.b64encode(inner).decode()},
    }


def test_gzip_bomb_is_refused_quickly() -> None:
    bomb = secret(b"{" + b" " * (helm.MAX_RELEASE_BYTES + 1024) + b"}")
    assert len(bomb["data"]["release"]) < 1024 * 1024  # fits in a Secret
    start = time.perf_counter()
    with pytest.raises(ValueError, match="more than 64 MiB"):
        helm.decode_release_secret(bomb)
    assert time.perf_counter() - start < 5


def test_corrupt_gzip_and_deep_json_are_value_errors() -> None:
    inner = base64.b64encode(b"\x1f\x8b" + b"garbage")
    with pytest.raises(ValueError, match="not gzip"):
        helm.decode_release_data(base64.b64encode(inner))
    with pytest.raises(ValueError, match="nests too deeply"):
        helm.decode_release_secret(secret(b"[" * 100_000 + b"]" * 100_000))


def test_normal_release_still_reads() -> None:
    rel = helm.decode_release_secret(
        secret(b'{"name": "x", "namespace": "ns", "version": 3, "manifest": ""}')
    )
    assert (rel.name, rel.revision) == ("x", 3)
