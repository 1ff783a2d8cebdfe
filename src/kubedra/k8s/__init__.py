"""Kubernetes knowledge every verb shares, below the use cases: supported releases, workloads → pod templates,
pods and gangs."""
