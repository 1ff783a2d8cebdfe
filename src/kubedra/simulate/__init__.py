"""``kubedra simulate`` / ``kubedra demo``: the same workloads scheduled with the NVIDIA device plugin and
with DRA, side by side, on a whole cluster.

    inputs = load_inputs(["cluster/", "workloads/"])              # kubedra.simulate.inputs
    sim = simulate(inputs, SimulateOptions(sizing="mig"))          # kubedra.simulate.run
    sim.to_dict()  # {"modes": {"device-plugin": {...}, "dra": {...}}}

Modules: :mod:`~kubedra.simulate.inputs` (files and templates), :mod:`~kubedra.simulate.cluster` (both views
of the cluster), :mod:`~kubedra.simulate.run` (orchestration), :mod:`~kubedra.simulate.results` (accounting
and JSON) and :mod:`~kubedra.simulate.bound` (optimal packing bound, optional ``ortools``). The table,
Markdown, SVG/PNG chart and HTML renderings live above, in :mod:`kubedra.report` (``simulate``,
``simulate_chart``, ``pages``).
"""
