"""``kubedra completion bash|zsh|fish``: the shell completion script, from click's shell completion."""

from __future__ import annotations

from dataclasses import dataclass

import click

from kubedra.commands._common import exit_codes_epilog
from kubedra.errors import EXIT_INPUT, EXIT_OK

SHELLS = ("bash", "zsh", "fish")


@dataclass(frozen=True)
class CompletionOptions:
    """``kubedra completion``'s one argument (click refuses a shell it has no script for)."""

    shell: str


@click.command(
    "completion",
    epilog=exit_codes_epilog({EXIT_OK: "script printed", EXIT_INPUT: "usage error (unknown shell)"}),
)
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the completion script for SHELL (verbs, options and option values complete with Tab).

    \b
    bash:  source <(kubedra completion bash)      # or save it under ~/.local/share/bash-completion/completions/kubedra
    zsh:   kubedra completion zsh > "${fpath[1]}/_kubedra"
    fish:  kubedra completion fish > ~/.config/fish/completions/kubedra.fish
    """
    run(CompletionOptions(shell))


def run(options: CompletionOptions) -> None:
    from click.shell_completion import get_completion_class

    root = click.get_current_context().find_root().command  # the kubedra group (commands sit below the CLI)
    cls = get_completion_class(options.shell)
    assert cls is not None  # click ships all three
    click.echo(cls(root, {}, "kubedra", "_KUBEDRA_COMPLETE").source())
