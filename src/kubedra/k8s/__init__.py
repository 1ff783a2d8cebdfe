"""Kubernetes knowledge every verb shares (supported releases, ...), below the use cases."""
