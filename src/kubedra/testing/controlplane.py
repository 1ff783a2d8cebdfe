"""A real Kubernetes control plane for integration tests: etcd, kube-apiserver, kube-scheduler and
kube-controller-manager, built by ``make testbed``, on free loopback ports, without kubelets.

    with ControlPlane("1.37") as cp:
        cp.api.create({...})            # JSON REST (kubedra.testing.kubeapi.KubeAPI)
        cp.kubeconfig                   # for kubectl-like clients

Each component runs in its own process group and is killed with it on :meth:`ControlPlane.stop` (also
at interpreter exit, and on Linux when the test process dies); the temp dir goes with it unless
``KUBEDRA_TESTBED_KEEP=1``, which keeps certificates and component logs for a post-mortem.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from kubedra.k8s import versions
from kubedra.testing import binaries
from kubedra.testing.kubeapi import ApiError, KubeAPI

# resource.k8s.io beta and alpha versions are off by default upstream; serving them lets tests (and
# kubedra validate --server-side) use manifests at any DRA API version. v1alpha3 serves DeviceTaintRule.
_DRA_RUNTIME_CONFIG = ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1alpha3")


@dataclass(frozen=True)
class VersionProfile:
    """What differs between the Kubernetes minors the testbed builds."""

    version: str
    # Gates that make the scheduler gang-schedule PodGroups and serve the Workload API.
    workload_gates: Mapping[str, bool]
    # The scheduling.k8s.io version serving Workload and PodGroup; None before gang scheduling (1.34).
    workload_api: str | None


def _profile(version: str) -> VersionProfile:
    gang = versions.api("gang", version)  # data/versions.yaml apis.gang: None before its first release
    if gang is None:
        return VersionProfile(version, {}, None)
    return VersionProfile(version, dict.fromkeys(gang["gates"], True), gang["apiVersion"])


PROFILES: dict[str, VersionProfile] = {version: _profile(version) for version in versions.testbed()}

# resourceclaim-controller turns ResourceClaimTemplates into claims; serviceaccount-controller creates the
# "default" ServiceAccount that pod admission requires; namespace and garbage collection keep deletes
# realistic (generated claims are owned by their pod). No node-lifecycle controller: nodes have no kubelet.
DEFAULT_CONTROLLERS = (
    "resourceclaim-controller",
    "serviceaccount-controller",
    "namespace-controller",
    "garbage-collector-controller",
)

# The controllers that turn Kubernetes' own workloads into pods, for tests that let kube-controller-manager
# create them (the real-world agreement suite): add them to DEFAULT_CONTROLLERS.
WORKLOAD_CONTROLLERS = (
    "deployment-controller",
    "replicaset-controller",
    "replicationcontroller-controller",
    "statefulset-controller",
    "daemonset-controller",
    "job-controller",
)


class ControlPlaneError(RuntimeError):
    """A component failed to start or become ready; the message ends with its log tail."""


def free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (held open together so they differ)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


_WORKDIR_PREFIX = "kubedra-cp-"
_OWNER_FILE = "owner.pid"


def _remove_orphaned_workdirs() -> None:
    """Remove work dirs left by test processes that were killed outright (their components died with them)."""
    if os.environ.get("KUBEDRA_TESTBED_KEEP") == "1":
        return
    for path in Path(tempfile.gettempdir()).glob(_WORKDIR_PREFIX + "*"):
        try:
            pid = int((path / _OWNER_FILE).read_text())
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except (OSError, ValueError):
            continue  # no owner file yet, or not ours to judge


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: have the kernel SIGKILL the child when the test process dies, so nothing is left behind."""
    os.setsid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            pr_set_pdeathsig = 1
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path


@dataclass
class ControlPlane:
    """One control plane. ``feature_gates`` override the release's defaults, ``runtime_config`` adds
    ``group/version=true|false`` entries, ``workload`` switches the gang-scheduling/Workload API on."""

    version: str = binaries.DEFAULT_VERSION
    workload: bool = False
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    runtime_config: Sequence[str] = ()
    controllers: Sequence[str] = DEFAULT_CONTROLLERS
    start_timeout: float = 120.0

    workdir: Path | None = field(default=None, init=False)
    url: str = field(default="", init=False)
    api: KubeAPI = field(init=False)
    _procs: list[_Proc] = field(default_factory=list, init=False, repr=False)

    # ------------------------------------------------------------------ public

    def __post_init__(self) -> None:
        if self.version not in PROFILES:
            raise ValueError(f"unsupported Kubernetes version {self.version} (have {', '.join(PROFILES)})")
        if self.workload and self.profile.workload_api is None:
            raise ValueError(
                f"Kubernetes {self.version} has no gang-scheduling API (data/versions.yaml apis.gang)"
            )

    @property
    def profile(self) -> VersionProfile:
        return PROFILES[self.version]

    @property
    def kubeconfig(self) -> Path:
        assert self.workdir is not None, "control plane not started"
        return self.workdir / "kubeconfig"

    @property
    def certs(self) -> Path:
        assert self.workdir is not None, "control plane not started"
        return self.workdir / "pki"

    @property
    def logs(self) -> Path:
        assert self.workdir is not None, "control plane not started"
        return self.workdir / "logs"

    def gates(self) -> dict[str, bool]:
        """The feature gates passed to every component (only overrides of upstream defaults)."""
        gates: dict[str, bool] = {}
        if self.workload:
            gates.update(self.profile.workload_gates)
        gates.update(self.feature_gates)
        return gates

    def runtime_config_flag(self) -> str:
        entries = [f"{gv}=true" for gv in _DRA_RUNTIME_CONFIG]
        if self.workload:
            entries.append(f"{self.profile.workload_api}=true")
        entries.extend(self.runtime_config)
        return ",".join(entries)

    def start(self) -> ControlPlane:
        """Start etcd, the apiserver, the controller-manager and the scheduler; return when all are ready.

        Raises :class:`binaries.TestbedMissing` when the binaries are not built and
        :class:`ControlPlaneError` when a component does not come up (everything started is stopped)."""
        profile = self.profile
        exe = {
            name: binaries.require(name, profile.version)
            for name in (*binaries.KUBERNETES, binaries.LAUNCHER)
        }
        _remove_orphaned_workdirs()
        self.workdir = Path(tempfile.mkdtemp(prefix=_WORKDIR_PREFIX + f"{profile.version}-"))
        (self.workdir / _OWNER_FILE).write_text(str(os.getpid()))
        self.logs.mkdir()
        atexit.register(self.stop)
        try:
            self._run_once([str(exe[binaries.LAUNCHER]), "certs", str(self.certs)])
            # A port picked here can be taken by someone else before a component binds it: retry.
            for attempt in range(3):
                try:
                    self._start_components(exe)
                    break
                except ControlPlaneError as err:
                    self._stop_processes()
                    if "address already in use" not in str(err) or attempt == 2:
                        raise
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Kill every component's process group and remove the work dir. Safe to call twice."""
        self._stop_processes()
        atexit.unregister(self.stop)
        if self.workdir is not None and os.environ.get("KUBEDRA_TESTBED_KEEP") != "1":
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def log_tail(self, component: str, lines: int = 30) -> str:
        path = self.logs / f"{component}.log"
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # ------------------------------------------------------------------ internals

    def _run_once(self, argv: list[str]) -> None:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        if proc.returncode != 0:
            raise ControlPlaneError(f"{' '.join(argv)} failed: {proc.stderr.strip()}")

    def _spawn(self, name: str, argv: list[str]) -> _Proc:
        log = self.logs / f"{name}.log"
        with log.open("ab") as out:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,  # also setsid: a process group of its own
                close_fds=True,
            )
        proc = _Proc(name, popen, log)
        self._procs.append(proc)
        return proc

    def _stop_processes(self) -> None:
        # One at a time, clients before servers (scheduler, controller-manager, apiserver, etcd): an
        # apiserver or etcd with clients still attached drains them gracefully for many seconds. Nothing
        # here needs a clean shutdown (the data dir is thrown away), so the grace period is short.
        procs, self._procs = self._procs, []
        for proc in reversed(procs):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.popen.pid, signal.SIGTERM)
            try:
                proc.popen.wait(timeout=2)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.popen.pid, signal.SIGKILL)
                proc.popen.wait(timeout=10)
            # Children the component may have left in its group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.popen.pid, signal.SIGKILL)

    def _start_components(self, exe: Mapping[str, Path]) -> None:
        assert self.workdir is not None
        etcd_client, etcd_peer, api_port, sched_port, kcm_port = free_ports(5)
        pki = self.certs
        gates = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.gates().items()))
        gate_flags = [f"--feature-gates={gates}"] if gates else []
        self.url = f"https://127.0.0.1:{api_port}"
        self._write_kubeconfig()
        self.api = KubeAPI(self.url, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")

        etcd_dir = self.workdir / "etcd"
        shutil.rmtree(etcd_dir, ignore_errors=True)
        etcd = self._spawn(
            "etcd",
            [
                str(exe[binaries.LAUNCHER]),
                "etcd",
                f"--data-dir={etcd_dir}",
                f"--listen-client=http://127.0.0.1:{etcd_client}",
                f"--listen-peer=http://127.0.0.1:{etcd_peer}",
            ],
        )
        self._wait_tcp(etcd, etcd_client)

        apiserver = self._spawn(
            "kube-apiserver",
            [
                str(exe["kube-apiserver"]),
                f"--etcd-servers=http://127.0.0.1:{etcd_client}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                # A loopback advertise address is refused by the endpoint reconciler; nothing needs it here.
                "--endpoint-reconciler-type=none",
                f"--secure-port={api_port}",
                f"--cert-dir={self.workdir / 'apiserver-certs'}",
                f"--tls-cert-file={pki / 'apiserver.crt'}",
                f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--client-ca-file={pki / 'ca.crt'}",
                f"--service-account-key-file={pki / 'sa.pub'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--authorization-mode=RBAC",
                "--allow-privileged=true",
                "--profiling=false",
                f"--runtime-config={self.runtime_config_flag()}",
                *gate_flags,
                "--v=1",
            ],
        )
        self._wait_https(apiserver, f"{self.url}/readyz", client_cert=True)

        common = [
            f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            "--leader-elect=false",
            "--profiling=false",
            *gate_flags,
            "--v=1",
        ]
        kcm = self._spawn(
            "kube-controller-manager",
            [
                str(exe["kube-controller-manager"]),
                *common,
                f"--secure-port={kcm_port}",
                f"--cert-dir={self.workdir / 'kcm-certs'}",
                f"--controllers={','.join(self.controllers)}",
            ],
        )
        scheduler_config = self.workdir / "scheduler.yaml"
        scheduler_config.write_text(
            "apiVersion: kubescheduler.config.k8s.io/v1\n"
            "kind: KubeSchedulerConfiguration\n"
            f"clientConnection:\n  kubeconfig: {self.kubeconfig}\n"
            "leaderElection:\n  leaderElect: false\n"
            "profiles:\n- schedulerName: default-scheduler\n"
        )
        scheduler = self._spawn(
            "kube-scheduler",
            [
                str(exe["kube-scheduler"]),
                f"--config={scheduler_config}",
                f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={sched_port}",
                f"--cert-dir={self.workdir / 'scheduler-certs'}",
                *gate_flags,
                "--v=1",
            ],
        )
        self._wait_https(kcm, f"https://127.0.0.1:{kcm_port}/healthz")
        self._wait_https(scheduler, f"https://127.0.0.1:{sched_port}/healthz")
        if "serviceaccount-controller" in self.controllers:
            path = "/api/v1/namespaces/default/serviceaccounts/default"
            self._wait(kcm, "the default ServiceAccount", lambda: self._exists(path))

    def _exists(self, path: str) -> bool:
        try:
            self.api.get(path)
            return True
        except ApiError as err:
            if err.status == 404:
                return False
            raise

    def _write_kubeconfig(self) -> None:
        pki = self.certs
        self.kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: kubedra-testbed\n  cluster:\n    server: {self.url}\n"
            f"    certificate-authority: {pki / 'ca.crt'}\n"
            "users:\n- name: kubedra-admin\n  user:\n"
            f"    client-certificate: {pki / 'admin.crt'}\n    client-key: {pki / 'admin.key'}\n"
            "contexts:\n- name: kubedra-testbed\n  context:\n    cluster: kubedra-testbed\n    user: kubedra-admin\n"
            "current-context: kubedra-testbed\n"
        )

    def _check_alive(self, proc: _Proc) -> None:
        code = proc.popen.poll()
        if code is not None:
            raise ControlPlaneError(
                f"{proc.name} exited with status {code} while starting:\n{self.log_tail(proc.name)}"
            )

    def _wait(self, proc: _Proc, what: str, check: object) -> None:
        assert callable(check)
        deadline = time.monotonic() + self.start_timeout
        last = ""
        while time.monotonic() < deadline:
            self._check_alive(proc)
            try:
                if check():
                    return
            except (OSError, ApiError, ssl.SSLError) as err:
                last = str(err)
            time.sleep(0.1)
        raise ControlPlaneError(
            f"{proc.name}: {what} not ready after {self.start_timeout:.0f}s ({last}):\n{self.log_tail(proc.name)}"
        )

    def _wait_tcp(self, proc: _Proc, port: int) -> None:
        def check() -> bool:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True

        self._wait(proc, f"port {port}", check)

    def _wait_https(self, proc: _Proc, url: str, client_cert: bool = False) -> None:
        if client_cert:
            ctx = ssl.create_default_context(cafile=str(self.certs / "ca.crt"))
            ctx.load_cert_chain(str(self.certs / "admin.crt"), str(self.certs / "admin.key"))
        else:
            # The scheduler and controller-manager serve a self-signed certificate of their own.
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE

        def check() -> bool:
            try:
                with urllib.request.urlopen(url, context=ctx, timeout=5) as resp:
                    return bool(resp.status == 200)
            except urllib.error.HTTPError:
                return False

        self._wait(proc, url, check)
