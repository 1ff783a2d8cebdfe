"""``--chart FILE``: GPU and GPU-memory use per node, device plugin next to DRA.

SVG comes from a template (``data/templates/nodes.svg.j2``). PNG is drawn with matplotlib when it is installed
(``pip install 'kubedra[chart]'``); without it, ``.png`` is a usage error that says so. Past
:data:`MAX_NODES` nodes the chart shows the busiest ones and says how many it left out.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from kubedra.errors import UsageError
from kubedra.report import html
from kubedra.report.simulate import gib
from kubedra.safewrite import resolve_target, write_atomic
from kubedra.simulate.results import TITLES, NodeUse, Simulation
from kubedra.text import count

MAX_NODES = 64
COLORS = {"device-plugin": "#e4572e", "dra": "#17a398"}
ROW = 46
LEFT = 170
BAR_W = 300
GAP = 40


def _nodes(sim: Simulation) -> tuple[list[str], int]:
    names = list(sim.cluster.node_names)
    if len(names) <= MAX_NODES:
        return names, 0

    def busy(n: str) -> int:
        return max((r.nodes.get(n, NodeUse()).used for r in sim.results.values()), default=0)

    keep = set(sorted(names, key=lambda n: (-busy(n), names.index(n)))[:MAX_NODES])
    return [n for n in names if n in keep], len(names) - MAX_NODES


@dataclass
class _Bar:
    x: float
    y: float
    frac: float
    color: str
    label: str
    full: int = BAR_W


def _bar(x: float, y: float, frac: float, color: str, label: str) -> _Bar:
    return _Bar(x, y, max(0.0, min(frac, 1.0)), color, label)


def svg(sim: Simulation) -> str:
    """The chart as an SVG document (``data/templates/nodes.svg.j2``)."""
    names, hidden = _nodes(sim)
    modes = list(sim.results)
    col_w = BAR_W + 150 + GAP
    nodes = []
    for j, name in enumerate(names):
        y = 62 + j * ROW
        bars = []
        for i, mode in enumerate(modes):
            use = sim.results[mode].nodes.get(name, NodeUse())
            x = LEFT + i * col_w
            color = COLORS.get(mode, "#555")
            gpus = use.used / use.physical if use.physical else 0.0
            mem = use.allocated / use.memory if use.memory else 0.0
            bars.append(_bar(x, y, gpus, color, f"GPUs {use.used}/{use.physical}"))
            bars.append(
                _bar(x, y + 18, mem, color + "99", f"memory {gib(use.allocated)} / {gib(use.memory)}")
            )
        nodes.append({"name": name, "y": y, "bars": bars})
    chart = {
        "width": LEFT + col_w * len(modes) + 20,
        "height": 70 + ROW * len(names) + (20 if hidden else 0) + 10,
        "modes": [
            {
                "x": LEFT + i * col_w,
                "color": COLORS.get(mode, "#333"),
                "title": TITLES.get(mode, mode),
                "placed": sim.results[mode].placed,
                "pending": sim.results[mode].pending,
            }
            for i, mode in enumerate(modes)
        ],
        "nodes": nodes,
        "hidden": count(hidden, "more node") if hidden else "",
        "hidden_y": 62 + len(names) * ROW + 10,
    }
    return html.macro("nodes.svg.j2", "nodes", chart)


def _png(sim: Simulation, path: Path) -> None:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    names, _hidden = _nodes(sim)
    modes = list(sim.results)
    fig, axes = plt.subplots(1, 2, figsize=(12, max(2.5, 0.35 * len(names) + 1.5)), squeeze=False)
    height = 0.8 / max(len(modes), 1)
    for k, (title, key) in enumerate(
        (("GPUs used (fraction)", "gpu"), ("GPU memory allocated (fraction)", "mem"))
    ):
        ax = axes[0][k]
        for i, mode in enumerate(modes):
            vals = []
            for n in names:
                use = sim.results[mode].nodes.get(n, NodeUse())
                if key == "gpu":
                    vals.append(use.used / use.physical if use.physical else 0.0)
                else:
                    vals.append(use.allocated / use.memory if use.memory else 0.0)
            ys = [j + i * height for j in range(len(names))]
            ax.barh(ys, vals, height=height, color=COLORS.get(mode, "#555"), label=TITLES.get(mode, mode))
        ax.set_yticks([j + height * (len(modes) - 1) / 2 for j in range(len(names))])
        ax.set_yticklabels(names)
        ax.set_xlim(0, 1)
        ax.invert_yaxis()
        ax.set_title(title)
        ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def check_chart_path(path: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in (".svg", ".png"):
        raise UsageError(f"--chart {path}: the file name must end in .svg or .png")
    if suffix == ".png" and importlib.util.find_spec("matplotlib") is None:
        raise UsageError(
            f"--chart {path}: PNG needs matplotlib (pip install 'kubedra[chart]'); .svg needs nothing"
        )


def write_chart(sim: Simulation, path: str) -> None:
    check_chart_path(path)
    target = Path(path)
    if target.suffix.lower() == ".png":
        resolve_target(path)  # refuse a FIFO, device or folder before matplotlib opens it
        _png(sim, target)
    else:
        write_atomic(path, svg(sim))
