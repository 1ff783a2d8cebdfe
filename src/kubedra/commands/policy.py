"""``kubedra policy``: generate baseline ValidatingAdmissionPolicies, test policies offline, port webhooks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from kubedra.commands._common import (
    CommonOptions,
    exit_codes_epilog,
    input_options,
    output_option,
    target_version_option,
)
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, InputError
from kubedra.report.output import emit, print_table
from kubedra.text import count

if TYPE_CHECKING:
    from kubedra.policy.generate import PolicyOptions


@click.group("policy")
def policy() -> None:
    """Generate and test ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1)."""


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(x.strip() for v in values for x in v.split(",") if x.strip())


@dataclass(frozen=True)
class PolicyGenerateOptions:
    """``kubedra policy generate``'s options as parsed (the manifests whose DeviceClasses are allowed in
    ``common``); :meth:`engine_options` builds the use case's :class:`kubedra.policy.generate.PolicyOptions`."""

    common: CommonOptions
    only: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    dra_pool_label: str | None = None
    classes: tuple[str, ...] = ()
    params_namespace: str = "kube-system"
    actions: str = "Warn,Audit"
    list_only: bool = False
    out: str = "-"

    @classmethod
    def complete(cls, params: dict[str, Any]) -> PolicyGenerateOptions:
        return cls(common=CommonOptions.take(params), **params)

    def validate(self) -> None:
        """Nothing conflicts here (policy names and actions are checked by the use case)."""

    def engine_options(self, defined_classes: Sequence[str]) -> PolicyOptions:
        from kubedra.policy.generate import PolicyOptions

        return PolicyOptions(
            required_labels=_split(self.labels),
            dra_pool_label=self.dra_pool_label,
            device_classes=_split(self.classes),
            defined_classes=tuple(defined_classes),
            params_namespace=self.params_namespace,
            actions=_split((self.actions,)),
            only=_split(self.only),
        )


@dataclass(frozen=True)
class PolicyTestOptions:
    """``kubedra policy test``'s options as parsed (manifests, -o and --target-version in ``common``)."""

    common: CommonOptions
    policy_paths: tuple[str, ...] = ()
    params_paths: tuple[str, ...] = ()
    default_namespace: str = "default"

    @classmethod
    def complete(cls, params: dict[str, Any]) -> PolicyTestOptions:
        return cls(common=CommonOptions.take(params), **params)

    def validate(self) -> None:
        """Nothing conflicts here (--policy and the inputs are required while the flags are parsed)."""


@dataclass(frozen=True)
class PolicyFromWebhookOptions:
    """``kubedra policy from-webhook``'s options: the webhook configurations in ``common``."""

    common: CommonOptions

    @classmethod
    def complete(cls, params: dict[str, Any]) -> PolicyFromWebhookOptions:
        return cls(common=CommonOptions.take(params), **params)

    def validate(self) -> None:
        """Nothing to check beyond the required input."""


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
@click.option(
    "-o",
    "--output",
    "out",
    default="-",
    show_default=True,
    metavar="FILE",
    help="File to write the YAML to (atomically; nothing is written on an error); - for stdout.",
)
@input_options(
    required=False,
    help="Manifests (e.g. kubedra migrate's output) whose DeviceClasses are allowed too; - for stdin. Repeatable.",
)
def generate_cmd(**params: Any) -> None:
    """Print the baseline policies, bindings and params ConfigMaps as YAML.

    Policies: disallow-latest-tag, disallow-privileged, require-requests-limits, require-labels,
    gpu-no-device-plugin-on-dra-pools, gpu-known-device-classes. Bindings start with [Warn, Audit];
    generate again with --actions Deny to enforce. DeviceClasses defined in the PATHs (such as the
    time-slicing and MPS classes migrate writes) join the allowed list.
    """
    options = PolicyGenerateOptions.complete(params)
    options.validate()
    run_generate(options)


def run_generate(options: PolicyGenerateOptions) -> None:
    from kubedra.policy.generate import available, defined_device_classes, generate, render
    from kubedra.sources import files as manifest_files

    files = options.common.files
    if options.list_only:
        click.echo("\n".join(available()))
        return
    opts = options.engine_options(
        defined_device_classes(
            [d.obj for d in manifest_files.load(files, keep_nodes=False).documents] if files else []
        )
    )
    text = render(generate(opts))
    if options.out == "-":
        click.echo(text, nl=False)
    else:
        from kubedra.report.output import write_atomic

        write_atomic(options.out, text)


@policy.command(
    "test",
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "nothing violates",
            EXIT_FINDINGS: "some object violates a policy (denied, warned or audited), also when others were not "
            "decided: what was found wins",
            EXIT_INPUT: "usage or input error (no manifests in the inputs, a document that is no Kubernetes object); "
            "or incomplete and no violation: a Helm template or chart among the manifests was not read (named on "
            "stderr, JSON notRead), or a verdict undecided: an object's Namespace is not among the inputs and a "
            "namespaceSelector reads its labels, or an expression its namespaceObject (the verdicts are still "
            "printed, JSON lists them under undecided, stderr names each)",
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
def test_cmd(**params: Any) -> None:
    """Evaluate policies offline against manifests (each object as a CREATE) and print what they reject."""
    options = PolicyTestOptions.complete(params)
    options.validate()
    run_test(options)


def run_test(options: PolicyTestOptions) -> None:
    from kubedra.policy.evaluate import Evaluator
    from kubedra.sources.files import load, load_reporting_templates

    files, output, target_version = options.common.files, options.common.output, options.common.target_version
    policy_paths, params_paths = options.policy_paths, options.params_paths
    evaluator = Evaluator(load(policy_paths).documents, target_version)
    if params_paths:
        evaluator.add_params(load(params_paths).documents)
    loaded = load_reporting_templates(files, "policy test")
    # a Helm template among the manifests is named and left out, as audit, simulate and migrate do
    not_read = [str(e) for e in loaded.errors]
    for line in not_read:
        click.echo(f"kubedra: not read: {line}", err=True)
    documents = loaded.documents
    if not documents and not not_read:
        shown = ", ".join("<stdin>" if f == "-" else f for f in files)
        raise InputError(f"no manifests found in {shown}: nothing to test")
    for d in documents:
        if not d.api_version or not d.kind:  # no request the apiserver would admit: no policy can match it
            raise InputError(
                "not a Kubernetes object (no apiVersion/kind): a fragment or a tool's own configuration; "
                "no policy can be tested against it",
                d.location,
            )
    evaluator.add_params(d for d in documents if d.kind == "ConfigMap")
    verdicts = evaluator.evaluate(documents, options.default_namespace)
    undecided = [v for v in verdicts if v.undecided]
    violations = [v for v in verdicts if not v.undecided]
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
            f"{count(len(violations), 'violation')}, {denied} would be denied"
            + (f", {len(undecided)} not decided" if undecided else ""),
            err=True,
        )
    else:
        emit(
            {
                "violations": [v.to_dict() for v in violations],
                "undecided": [v.to_dict() for v in undecided],
                "objects": len(documents),
                "notRead": not_read,
            },
            output,
        )
    for v in undecided:
        where = f"{v.document.file}:{v.document.line}"
        why = v.message.removeprefix("not decided: ")
        click.echo(
            f"kubedra: undecided: {where}: {v.document.describe()}: policy {v.policy}: {why}", err=True
        )
    # a violation found is the answer (1) even when other verdicts were not decided; undecided is exit 2 only
    # when nothing violates, and never clean (0)
    if not_read and not violations:
        click.echo(
            f"kubedra: incomplete: {count(len(not_read), 'input')} not read (Helm templates or charts): render "
            "them and test the output",
            err=True,
        )
    code = EXIT_FINDINGS if violations else EXIT_INPUT if undecided or not_read else EXIT_OK
    click.get_current_context().exit(code)


@policy.command(
    "from-webhook",
    epilog=exit_codes_epilog({EXIT_OK: "policies printed", EXIT_INPUT: "usage or input error"}),
)
@input_options(
    missing="give a ValidatingWebhookConfiguration or MutatingWebhookConfiguration file (PATH or -f PATH)"
)
def from_webhook_cmd(**params: Any) -> None:
    """A ValidatingAdmissionPolicy skeleton (+ Warn/Audit binding) per webhook in the given configurations."""
    options = PolicyFromWebhookOptions.complete(params)
    options.validate()
    run_from_webhook(options)


def run_from_webhook(options: PolicyFromWebhookOptions) -> None:
    from kubedra.policy.generate import render
    from kubedra.policy.webhook import from_webhooks
    from kubedra.sources.files import load

    click.echo(render(from_webhooks(load(options.common.files).documents)), nl=False)
