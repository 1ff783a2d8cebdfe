"""Vendor knowledge: what each GPU vendor's device plugin and DRA driver publish and accept.

One package per vendor (``nvidia`` today), shaped so others can sit beside it. Vendors sit in the knowledge
layer: they may use :mod:`kubedra.k8s` and :mod:`kubedra.sources`, and nothing above them.
"""
