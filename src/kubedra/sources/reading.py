"""Finding and reading manifest files the way ``kubectl -f`` does: files, folders (recursive, sorted, hidden
entries skipped), ``-`` for stdin; every read is bounded by :data:`MAX_FILE_BYTES`.

Inside folders kubectl reads ``.json``, ``.yaml`` and ``.yml`` files and says nothing of the others; kubedra
does the same with files that hold no Kubernetes objects (``.txt``, ``.md``, files without an extension),
but names what does hold objects it cannot read yet: Helm templates (``.tpl``) are taken, so each verb
reports them, and a Helm chart folder (one with a ``Chart.yaml``) is taken whole, as one input whose reading
raises :class:`TemplateInput` (its templates, ``Chart.yaml`` and ``values.yaml`` are not manifests until Helm
renders the chart). :func:`chart_advice` is the command that renders it for a verb."""

from __future__ import annotations

import os
import shlex
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from kubedra.errors import InputError, Location
from kubedra.safewrite import file_kind
from kubedra.text import count

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# Helm/Go templates: taken from folders too, so that every verb reports them instead of skipping them
TEMPLATE_SUFFIXES = (".yaml.tpl", ".yml.tpl", ".tpl")
# a folder holding this file is a Helm chart: read whole as one input that is not read (TemplateInput)
CHART_FILE = "Chart.yaml"
STDIN = "-"
# kubedra reads at most this much of one file (or stdin): /dev/zero or a runaway pipe is refused, not read
# until memory runs out. Real manifests are far smaller (the API server takes 3 MiB per request).
MAX_FILE_BYTES = 64 * 1024 * 1024

# ``--skip-unreadable``: unreadable paths and special files inside folders are reported on stderr and
# skipped instead of stopping the command (set by the CLI option, see commands/_common.py).
SKIP_UNREADABLE = False


class TemplateInput(InputError):
    """An unrendered Helm/Go template or chart: not malformed YAML, just not manifests yet (every verb says so).
    ``chart``: the chart folder, when the input is a whole chart."""

    def __init__(self, message: str, location: Location | None = None, chart: str | None = None) -> None:
        super().__init__(message, location)
        self.chart = chart


def is_chart(path: str) -> bool:
    """Whether ``path`` is a Helm chart folder (it holds a ``Chart.yaml`` file)."""
    return os.path.isfile(os.path.join(path, CHART_FILE))


def chart_advice(verb: str, chart: str) -> str:
    """The command that gives ``kubedra VERB`` the manifests of ``chart`` (runs as printed)."""
    q = shlex.quote(chart)
    if verb == "audit":
        return f"audit it rendered with `kubedra audit --helm-chart {q}`"
    return f"render it and {verb} the output with `helm template {q} | kubedra {verb} -f -`"


def chart_error(chart: str, verb: str | None = None) -> TemplateInput:
    """The error of a Helm chart folder given as manifests (with the command for ``verb`` when known)."""
    why = "its templates are manifests only once Helm renders them"
    head = f"a Helm chart ({CHART_FILE}), not read"
    advice = (
        chart_advice(verb, chart) if verb else f"render it with `helm template {shlex.quote(chart)}` first"
    )
    message = f"{head}: {advice}; {why}"
    return TemplateInput(message, Location(file=chart), chart=chart)


def with_advice(err: InputError, verb: str) -> InputError:
    """``err`` with the command for ``verb`` when it is a Helm chart's, else ``err`` itself."""
    chart = getattr(err, "chart", None)
    return chart_error(chart, verb) if chart else err


def _walk(root: Path, suffixes: tuple[str, ...]) -> tuple[list[str], list[tuple[str, str]]]:
    """(readable manifest files and Helm chart folders, [(path, why not read)]) under ``root``; nothing is
    opened."""
    found: list[str] = []
    problems: list[tuple[str, str]] = []

    def onerror(e: OSError) -> None:
        problems.append((e.filename or str(root), f"cannot read folder: {e.strerror}"))

    for folder, dirs, names in os.walk(root, onerror=onerror):
        if CHART_FILE in names and is_chart(folder):
            found.append(folder)  # one input: its files are not manifests until rendered
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        regular = _regular_files(folder)
        for f in sorted(names):
            if not f.endswith(suffixes) or f.startswith("."):
                continue
            full = os.path.join(folder, f)
            if f not in regular:
                try:
                    st = os.stat(full)  # follows a symlink to its target, like kubectl
                except OSError as e:
                    problems.append((full, f"cannot read: {e.strerror}"))
                    continue
                if not stat.S_ISREG(st.st_mode):  # never opened: a FIFO blocks
                    problems.append((full, f"{file_kind(st.st_mode)}, not read"))
                    continue
            if not os.access(full, os.R_OK):
                problems.append((full, "cannot read: permission denied"))
            else:
                found.append(full)
    return found, problems


def _regular_files(folder: str) -> frozenset[str]:
    """Names of the regular files in ``folder`` that are no symlinks, as its listing says (the entry's type,
    no ``stat`` each: 10,000 manifests, 10,000 system calls less); empty when it cannot be listed. Any other
    entry (a symlink, a FIFO, an entry of unknown type) is ``stat``-ed by the caller as before."""
    try:
        with os.scandir(folder) as entries:
            return frozenset(e.name for e in entries if e.is_file(follow_symlinks=False))
    except OSError:
        return frozenset()


def _report_unreadable(problems: list[tuple[str, str]]) -> None:
    """Entries of input folders that are not read: one InputError naming the first and counting the rest,
    or (``--skip-unreadable``) a warning for each."""
    if not problems:
        return
    if not SKIP_UNREADABLE:
        path, reason = problems[0]
        more = f"; {count(len(problems) - 1, 'more path')} not read" if len(problems) > 1 else ""
        raise InputError(f"{reason}{more} (pass --skip-unreadable to skip them)", Location(file=path))
    for path, reason in problems:
        sys.stderr.write(f"kubedra: warning: {path}: {reason}: skipped\n")


def iter_manifest_files(paths: Iterable[str]) -> Iterator[str]:
    """Expand files and folders (recursively, sorted, hidden entries skipped) into manifest paths.

    Inside folders, regular files ending in ``MANIFEST_SUFFIXES`` or ``TEMPLATE_SUFFIXES`` (Helm templates,
    which every verb reports) are taken, and a Helm chart folder is taken whole (reading it raises
    :class:`TemplateInput`); a FIFO, device or socket there is never opened and, like an unreadable file or
    folder, is an InputError (a warning with ``--skip-unreadable``). Files named explicitly are always taken
    (``-f <(helm template ...)`` is a pipe); their reading is bounded by ``MAX_FILE_BYTES``."""
    suffixes = (*MANIFEST_SUFFIXES, *TEMPLATE_SUFFIXES)
    for p in paths:
        if p == STDIN:
            yield p
            continue
        path = Path(p)
        if path.is_dir():
            found, problems = _walk(path, suffixes)
            _report_unreadable(problems)
            yield from found
        elif path.exists():
            yield str(path)
        else:
            raise InputError(f"no such file or directory: {p}")


def read_bytes(name: str) -> bytes:
    """At most ``MAX_FILE_BYTES`` of a file (``-``: stdin); more is an InputError naming the file."""
    limit = MAX_FILE_BYTES
    if name == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read(limit + 1) if stream is not None else sys.stdin.read(limit + 1).encode()
        display = "<stdin>"
    else:
        display = name
        try:
            fd = os.open(name, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", Location(file=name)) from e
        try:
            data = _read_fd(fd, name, limit)
        finally:
            os.close(fd)
    if len(data) > limit:
        raise InputError(
            f"larger than {limit // (1024 * 1024)} MiB: not read (no manifest is that large)",
            Location(file=display),
        )
    return data


def _read_fd(fd: int, name: str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of an open file. A regular file is read in one call sized by fstat: a
    buffered ``read(limit + 1)`` allocated the whole limit first, 25-30 us of system time per file (0.3 s of
    10,000 manifests). Once it has given as many bytes as fstat said it holds, it is not asked again for the
    end (a read per file less); a short read, or a file that grew before the read, is read on to its end."""
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            if is_chart(name):
                raise chart_error(name)
            raise InputError("is a folder, not a file", Location(file=name))
        regular = stat.S_ISREG(st.st_mode)
        want = min(st.st_size, limit) + 1 if regular else 1 << 16
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(max(want - total, 1 << 16), limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if regular and total == st.st_size:
                break  # all it held when it was opened
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", Location(file=name)) from e
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_text(name: str, *, newline: str | None = None) -> str:
    """A manifest file's text (``-`` reads stdin), at most ``MAX_FILE_BYTES``; unreadable or non-UTF-8 files
    raise InputError. Line endings become ``\\n`` unless ``newline=""`` (keep them, for rewriting)."""
    data = read_bytes(name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        where = "<stdin>" if name == STDIN else name
        raise InputError(f"not a UTF-8 text file ({e.reason})", Location(file=where)) from e
    if newline is None and "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
