"""``kubedra simulate`` / ``kubedra demo``: the same workloads scheduled with the NVIDIA device plugin and
with DRA, side by side, on a whole cluster.

    inputs = load_inputs(["cluster/", "workloads/"])              # kubedra.simulate.inputs
    sim = simulate(inputs, SimulateOptions(sizing="mig"))          # kubedra.simulate.run
    sim.to_dict()  # {"modes": {"device-plugin": {...}, "dra": {...}}}

Modules: :mod:`~kubedra.simulate.inputs` (files and templates), :mod:`~kubedra.simulate.cluster` (both views
of the cluster), :mod:`~kubedra.simulate.run` (orchestration), :mod:`~kubedra.simulate.results` (accounting
and JSON), :mod:`~kubedra.simulate.render` (table/Markdown), :mod:`~kubedra.simulate.chart` (SVG/PNG) and
:mod:`~kubedra.simulate.bound` (optimal packing bound, optional ``ortools``).
"""
