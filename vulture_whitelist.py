api_lifecycle  # unused function (src/kubedra/audit/checks/apis.py:78)
pod_claim_source  # unused function (src/kubedra/audit/checks/apis.py:215)
v1beta1_shape  # unused function (src/kubedra/audit/checks/apis.py:248)
mixed_counter_slice  # unused function (src/kubedra/audit/checks/apis.py:278)
deprecated_requested  # unused function (src/kubedra/audit/checks/apis.py:301)
kube_dns  # unused function (src/kubedra/audit/checks/cluster_config.py:28)
kube_proxy_ipvs  # unused function (src/kubedra/audit/checks/cluster_config.py:96)
nftables_kernel  # unused function (src/kubedra/audit/checks/cluster_config.py:123)
cgroup_v1  # unused function (src/kubedra/audit/checks/cluster_config.py:144)
kubelet_skew  # unused function (src/kubedra/audit/checks/cluster_config.py:237)
upgrade_path  # unused function (src/kubedra/audit/checks/cluster_config.py:266)
crd_deprecated_versions  # unused function (src/kubedra/audit/checks/crds.py:12)
gpu_operator_crds  # unused function (src/kubedra/audit/checks/crds.py:51)
driver_not_ready  # unused function (src/kubedra/audit/checks/dra_health.py:55)
driver_release  # unused function (src/kubedra/audit/checks/dra_health.py:83)
gpu_nodes_without_slices  # unused function (src/kubedra/audit/checks/dra_health.py:111)
unallocated_claims  # unused function (src/kubedra/audit/checks/dra_health.py:138)
pool_consistency  # unused function (src/kubedra/audit/checks/dra_health.py:187)
gpu_requests  # unused function (src/kubedra/audit/checks/gpu.py:79)
custom_resource_gpus  # unused function (src/kubedra/audit/checks/gpu.py:120)
device_plugin_daemonsets  # unused function (src/kubedra/audit/checks/gpu.py:190)
time_slicing_configmaps  # unused function (src/kubedra/audit/checks/gpu.py:231)
dual_advertisement  # unused function (src/kubedra/audit/checks/gpu.py:321)
_.format_commands  # unused method (src/kubedra/cli.py:70)
completion  # unused function (src/kubedra/commands/completion.py:22)
demo  # unused function (src/kubedra/commands/demo.py:70)
generate_cmd  # unused function (src/kubedra/commands/policy.py:101)
test_cmd  # unused function (src/kubedra/commands/policy.py:159)
from_webhook_cmd  # unused function (src/kubedra/commands/policy.py:259)
resources_fit  # unused function (src/kubedra/scheduler/filters.py:109)
_.construct_mapping  # unused method (src/kubedra/sources/yamlread.py:43)
_.log_message  # unused method (src/kubedra/testing/faultapi.py:82)
_.do_GET  # unused method (src/kubedra/testing/faultapi.py:85)
_.do_POST  # unused method (src/kubedra/testing/faultapi.py:88)
_.do_PATCH  # unused method (src/kubedra/testing/faultapi.py:91)
# parameters a protocol fixes: signal handlers, __exit__, the kubernetes client's exec-provider run()
signum  # unused variable (src/kubedra/safewrite.py, tests/differential/compare.py)
exc_type  # unused variable (src/kubedra/testing/controlplane.py, src/kubedra/testing/faultapi.py)
previous_response  # unused variable (src/kubedra/sources/execplugin.py)
# validate.rules ExactRequest.exact(subrequest=...): passed by both callers, not read; see the lead's report
subrequest  # unused variable (src/kubedra/validate/rules.py)
_.removed_gates  # audit check registered by decorator (src/kubedra/audit/checks/cluster_config.py)
_.unpublished_selectors  # audit check registered by decorator (src/kubedra/audit/checks/selectors.py)

# Attributes a library reads (protobuf descriptors, ruamel's YAML(), re2 options, OR-Tools' solver parameters,
# urllib3's Retry on the client configuration, http.server's class attributes, PyYAML's representer hook).
_.oneof_index
_.map_entry
_.log_errors
_.preserve_quotes
_.max_time_in_seconds
_.num_workers
_.retries
protocol_version
_.daemon_threads
_.ignore_aliases
# Fields of records that are filled for their readers (Jinja2 templates, JSON output, the catalogue) or kept
# for the shape of the upstream object they mirror (nvidia-smi's MIG compute instance).
compute_instance_id
dra_driver
_.dra_driver
dra_after
duration
soak_w
legend_color
_.allocate_calls
_.has_selectors
inferred
# pytest: module handles kept by importorskip, an autouse fixture, a counter the summary prints
pty
_helm
agreed
pytest_collection_modifyitems  # hooks pytest calls (tests/integration/conftest.py: each release's plane stops early)
pytest_runtest_teardown
_.descend_resolver  # called by PyYAML's composer (src/kubedra/sources/yamlread.py)
_.ascend_resolver  # called by PyYAML's composer (src/kubedra/sources/yamlread.py)
