"""``kubedra audit``: migration readiness for a target Kubernetes version.

sources (files, Helm, clusters) -> items in scopes (:mod:`.engine`) -> checks keyed by rule id
(:mod:`.checks`, metadata in ``data/rules/audit-rules.yaml``) using lifecycle data (:mod:`.deprecations`,
``data/deprecations/``) -> findings in a :class:`.engine.Report`, which ``kubedra.report.audit`` renders.
"""
