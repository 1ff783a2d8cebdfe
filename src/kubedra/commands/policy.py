"""``kubedra policy``: generate baseline ValidatingAdmissionPolicies, test policies offline, port webhooks."""

from __future__ import annotations

import click

from kubedra.commands._common import (
    exit_codes_epilog,
    input_options,
    output_option,
    target_version_option,
)
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK
from kubedra.report.output import emit, print_table
from kubedra.text import count


@click.group("policy")
def policy() -> None:
    """Generate and test ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1)."""


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(x.strip() for v in values for x in v.split(",") if x.strip())


@policy.command(
    "generate",
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "policies printed",
            EXIT_INPUT: "usage error, or an input file that cannot be read or parsed",
        }
    ),
)
@click.option("--only", multiple=True, help="Policies to emit (repeat or comma-separate); default all.")
@click.option(
    "--required-label", "labels", multiple=True, help="Label every workload must carry (repeatable)."
)
@click.option("--dra-pool-label", help="Node label that marks DRA node pools (default kubedra.io/dra-pool).")
@click.option("--device-class", "classes", multiple=True, help="Allowed DeviceClass (repeatable).")
@click.option(
    "--params-namespace", default="kube-system", show_default=True, help="Namespace of the params ConfigMaps."
)
@click.option(
    "--actions",
    default="Warn,Audit",
    show_default=True,
    help="validationActions of the bindings; use Deny once Warn/Audit are clean.",
)
@click.option("--list", "list_only", is_flag=True, help="List the available policies.")
@input_options(
    required=False,
    help="Manifests (e.g. kubedra migrate's output) whose DeviceClasses are allowed too; - for stdin. Repeatable.",
)
def generate_cmd(
    files: tuple[str, ...],
    only: tuple[str, ...],
    labels: tuple[str, ...],
    dra_pool_label: str | None,
    classes: tuple[str, ...],
    params_namespace: str,
    actions: str,
    list_only: bool,
) -> None:
    """Print the baseline policies, bindings and params ConfigMaps as YAML.

    Policies: disallow-latest-tag, disallow-privileged, require-requests-limits, require-labels,
    gpu-no-device-plugin-on-dra-pools, gpu-known-device-classes. Bindings start with [Warn, Audit];
    generate again with --actions Deny to enforce. DeviceClasses defined in the PATHs (such as the
    time-slicing and MPS classes migrate writes) join the allowed list.
    """
    from kubedra.policy.generate import PolicyOptions, available, defined_device_classes, generate, render
    from kubedra.sources import files as manifest_files

    if list_only:
        click.echo("\n".join(available()))
        return
    opts = PolicyOptions(
        required_labels=_split(labels),
        dra_pool_label=dra_pool_label,
        device_classes=_split(classes),
        defined_classes=defined_device_classes(
            [d.obj for d in manifest_files.load(files, keep_nodes=False).documents] if files else []
        ),
        params_namespace=params_namespace,
        actions=_split((actions,)),
        only=_split(only),
    )
    click.echo(render(generate(opts)), nl=False)


@policy.command(
    "test",
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "nothing violates",
            EXIT_FINDINGS: "some object violates a policy (denied, warned or audited)",
            EXIT_INPUT: "usage or input error",
        }
    ),
)
@click.option(
    "--policy", "policy_paths", multiple=True, required=True, help="Policy/binding/params file or folder."
)
@click.option("--params", "params_paths", multiple=True, help="Extra params objects (e.g. the ConfigMap).")
@target_version_option(help="CEL environment of this release.")
@click.option(
    "--namespace",
    "default_namespace",
    default="default",
    show_default=True,
    help="Namespace for objects without one.",
)
@output_option()
@input_options(missing="no input: give the manifests to test as PATH... or -f PATH (- for stdin)")
def test_cmd(
    policy_paths: tuple[str, ...],
    params_paths: tuple[str, ...],
    target_version: str,
    default_namespace: str,
    output: str,
    files: tuple[str, ...],
) -> None:
    """Evaluate policies offline against manifests (each object as a CREATE) and print what they reject."""
    from kubedra.policy.evaluate import Evaluator
    from kubedra.sources.files import load

    evaluator = Evaluator(load(policy_paths).documents, target_version)
    if params_paths:
        evaluator.add_params(load(params_paths).documents)
    documents = load(files).documents
    evaluator.add_params(d for d in documents if d.kind == "ConfigMap")
    verdicts = evaluator.evaluate(documents, default_namespace)
    if output in ("table", "wide"):
        if verdicts:
            print_table(
                ["SOURCE", "OBJECT", "POLICY", "OUTCOME", "MESSAGE"],
                [
                    [
                        f"{v.document.file}:{v.document.line}",
                        v.document.describe(),
                        v.policy + ("" if v.binding else " (unbound)"),
                        v.outcome.upper(),
                        v.message,
                    ]
                    for v in verdicts
                ],
            )
        denied = sum(1 for v in verdicts if v.outcome == "denied")
        click.echo(
            f"{count(len(documents), 'object')}, {count(len(evaluator.policies), 'policy')}: "
            f"{count(len(verdicts), 'violation')}, {denied} would be denied",
            err=True,
        )
    else:
        emit({"violations": [v.to_dict() for v in verdicts], "objects": len(documents)}, output)
    click.get_current_context().exit(EXIT_FINDINGS if verdicts else EXIT_OK)


@policy.command(
    "from-webhook",
    epilog=exit_codes_epilog({EXIT_OK: "policies printed", EXIT_INPUT: "usage or input error"}),
)
@input_options(
    missing="give a ValidatingWebhookConfiguration or MutatingWebhookConfiguration file (PATH or -f PATH)"
)
def from_webhook_cmd(files: tuple[str, ...]) -> None:
    """A ValidatingAdmissionPolicy skeleton (+ Warn/Audit binding) per webhook in the given configurations."""
    from kubedra.policy.generate import render
    from kubedra.policy.webhook import from_webhooks
    from kubedra.sources.files import load

    click.echo(render(from_webhooks(load(files).documents)), nl=False)
