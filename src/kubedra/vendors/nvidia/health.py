"""GPU health signals and the device taints the NVIDIA DRA driver publishes for them.

The driver (kubernetes-sigs/dra-driver-nvidia-gpu, ``cmd/gpu-kubelet-plugin/device_health.go`` @ bc3c4d86,
behind its ``NVMLDeviceHealthCheck`` feature gate, alpha, off by default, v0.4.0+) listens to NVML events
and taints the device on its ResourceSlice:

- an XID critical error: ``gpu.nvidia.com/xid`` = the XID, effect ``NoSchedule``, or ``None`` for the
  application-level XIDs it ignores (13, 31, 43, 45, 68, 109, plus ``--additional-xids-to-ignore``);
- NVML reports the GPU lost (``ERROR_GPU_IS_LOST``, XID 79 "fallen off the bus"):
  ``gpu.nvidia.com/gpu-lost``, ``NoSchedule``, on *every* device the plugin publishes;
- a GPU whose events cannot be registered: ``gpu.nvidia.com/unmonitored``, ``None``.

It never uses ``NoExecute``: running pods keep running, the kubelet reports the device Unhealthy in
``allocatedResourcesStatus`` (gate ``ResourceHealthStatus``), and draining is an operator's
``NoExecute`` DeviceTaintRule. Full GPUs and static MIG devices are monitored; dynamic MIG devices are not.

kubedra sees the node's state (``nvidia-smi -q -x`` or NVML), not the event stream, so each state is mapped
to the XID NVML raises when it arises (NVIDIA XID catalogue): a pending row remap or page retirement is
XID 63, a failed remap or retirement XID 64, a volatile uncorrectable ECC error XID 48 (before Ampere) or
94/95 (contained/uncontained, Ampere and later: the counters do not say which, the taint's value is left
empty), a GPU that requires a reset follows a fatal XID it does not name (value left empty), a lost GPU is
XID 79. All of these are fatal XIDs: ``NoSchedule``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubedra.text import count

DRIVER = "gpu.nvidia.com"
KEY_XID = f"{DRIVER}/xid"
KEY_GPU_LOST = f"{DRIVER}/gpu-lost"
NO_SCHEDULE = "NoSchedule"
NONE = "None"
HEALTH_GATE = "NVMLDeviceHealthCheck"
# xidsToSkip in device_health.go: application errors, the GPU stays usable -> effect None
NON_FATAL_XIDS = frozenset({13, 31, 43, 45, 68, 109})
PRE_AMPERE = frozenset({"Volta", "Turing", "Pascal"})


@dataclass
class GpuHealth:
    """What a node reports about one GPU's health (all False / 0: healthy)."""

    uncorrectable_ecc: int = 0  # volatile uncorrectable ECC errors
    retirement_pending: bool = False  # retired_pages: pending_retirement / pending_blacklist
    remap_pending: bool = False  # remapped_rows: remapped_row_pending
    remap_failure: bool = False  # remapped_rows: remapped_row_failure
    reset_required: bool = False  # "GPU requires reset" / recovery action reset or reboot
    lost: bool = False  # "GPU is lost" / fallen off the bus (XID 79)
    signals: list[str] = field(default_factory=list)  # what was seen, for notes

    @property
    def healthy(self) -> bool:
        return not self.signals


@dataclass(frozen=True)
class HealthTaint:
    key: str
    effect: str
    value: str = ""
    why: str = ""

    def to_dict(self) -> dict[str, str]:
        d = {"key": self.key, "effect": self.effect}
        if self.value:
            d["value"] = self.value
        return d


def xid_effect(xid: int) -> str:
    return NONE if xid in NON_FATAL_XIDS else NO_SCHEDULE


def xid_taint(health: GpuHealth, architecture: str) -> HealthTaint | None:
    """The one ``gpu.nvidia.com/xid`` taint the driver keeps for this GPU (one taint per key; a later
    event never weakens a NoSchedule one), or None."""
    if health.remap_failure:
        return HealthTaint(KEY_XID, xid_effect(64), "64", "row remapping / page retirement failed (XID 64)")
    if health.remap_pending or health.retirement_pending:
        what = "row remap" if health.remap_pending else "page retirement"
        return HealthTaint(KEY_XID, xid_effect(63), "63", f"{what} pending (XID 63), needs a GPU reset")
    if health.uncorrectable_ecc:
        if architecture in PRE_AMPERE:
            return HealthTaint(KEY_XID, xid_effect(48), "48", "uncorrectable (double-bit) ECC error (XID 48)")
        return HealthTaint(
            KEY_XID,
            NO_SCHEDULE,
            "",
            f"{count(health.uncorrectable_ecc, 'volatile uncorrectable ECC error')} (XID 94 or 95: the counters do not "
            "say which, the taint's value is left empty)",
        )
    if health.reset_required:
        return HealthTaint(
            KEY_XID, NO_SCHEDULE, "", "GPU requires a reset after a fatal XID it does not name"
        )
    return None
