"""The kubedra chart's CronJob runner (mounted from a ConfigMap, run with the image's Python).

Runs each kubedra command of $KUBEDRA_RUNS (a JSON list of {"name", "args"}) with its stderr passed through,
prints one compact JSON line per run to stdout: {"kubedra": NAME, "exitCode": N, "result": <its -o json>},
and, when $KUBEDRA_RESULTS_CONFIGMAP names a ConfigMap of $POD_NAMESPACE, patches NAME.json, exitCodes and
time into it (kubedra's own client, in-cluster config). Exits with the highest exit code of the runs (a
ConfigMap that cannot be written: at least 2), so the Job fails when any run did.
"""

import datetime
import json
import os
import subprocess
import sys

# A ConfigMap holds at most 1 MiB; a result that would not fit is replaced by a note (the log has it whole).
CONFIGMAP_BUDGET = 900_000


def run_all(runs):
    results = {}
    for run in runs:
        proc = subprocess.run(["kubedra", *run["args"]], stdout=subprocess.PIPE, text=True, check=False)
        try:
            result = json.loads(proc.stdout) if proc.stdout.strip() else None
        except ValueError:
            result = {"unparsedOutput": proc.stdout[-2000:]}
        line = {"kubedra": run["name"], "exitCode": proc.returncode, "result": result}
        print(json.dumps(line, separators=(",", ":"), sort_keys=True), flush=True)
        results[run["name"]] = (proc.returncode, proc.stdout)
    return results


def configmap_data(results, now):
    data = {
        "exitCodes": json.dumps({name: code for name, (code, _) in results.items()}, sort_keys=True),
        "time": now,
    }
    budget = CONFIGMAP_BUDGET
    for name, (_, out) in results.items():
        size = len(out.encode())
        if size > budget:
            out = json.dumps({"omitted": f"{size} bytes do not fit in a ConfigMap: see the Job's log"})
        budget -= len(out.encode())
        data[f"{name}.json"] = out
    return data


def store(name, namespace, data):
    from kubernetes import client

    from kubedra.sources import cluster

    api = client.CoreV1Api(cluster.api_client(None, None))
    api.patch_namespaced_config_map(name, namespace, {"data": data})


def main():
    runs = json.loads(os.environ["KUBEDRA_RUNS"])
    results = run_all(runs)
    worst = max((code for code, _ in results.values()), default=0)
    configmap = os.environ.get("KUBEDRA_RESULTS_CONFIGMAP")
    if configmap:
        namespace = os.environ.get("POD_NAMESPACE", "")
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        try:
            store(configmap, namespace, configmap_data(results, now))
        except Exception as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            print(f"kubedra-runner: cannot write ConfigMap {namespace}/{configmap}: {first}", file=sys.stderr)
            worst = max(worst, 2)
    return worst


if __name__ == "__main__":
    sys.exit(main())
