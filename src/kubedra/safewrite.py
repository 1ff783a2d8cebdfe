"""Writing files safely: only regular files are replaced, atomically, with their mode kept.

Every file kubedra writes (``--html``, ``snapshot -o``, ``simulate --chart/--save-cluster``, ``migrate --out``
and ``--in-place``) goes through here:

* the text goes to a temporary file in the target's folder, named ``.kubedra-tmp-<pid>-<random>``, which is
  fsynced and renamed over the target: a reader sees the old file or the new one, never half of it;
* a symlink is written through: its final target is replaced, the link stays a link;
* a folder, FIFO, device or socket at the path is refused (InputError, exit 2), and so is a read-only file
  (unless ``overwrite_readonly``); a missing folder is refused, not created (except where a caller asks);
* an existing file keeps its permission bits; a new file gets ``0666 & ~umask`` (not mkstemp's 0600);
* a file too large to hold as one text (``kubedra snapshot -o FILE.json``) is written piece by piece through
  :func:`open_atomic`, with the same temporary, checks and rename;
* temporaries are removed on any error, Ctrl-C and SIGTERM; after a ``kill -9`` the next write into the same
  folder removes the temporaries this user left there whose process is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
from collections.abc import Iterator, Mapping
from types import FrameType
from typing import BinaryIO

from kubedra.errors import InputError, Location

TEMP_PREFIX = ".kubedra-tmp-"

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, for messages ("a FIFO", "a folder", ...)."""
    for test, what in _KINDS:
        if test(mode):
            return what
    return "not a regular file"


def resolve_target(path: str, *, overwrite_readonly: bool = False) -> tuple[str, int | None]:
    """The file a write to ``path`` replaces (a symlink's final target) and its permission bits (None when it
    does not exist yet). InputError when it is not a regular file, is read-only, or its folder is missing."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", Location(file=path)) from e
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise InputError(
                f"is {file_kind(st.st_mode)}, not a regular file: refusing to replace it", Location(path)
            )
        if not overwrite_readonly and not os.access(real, os.W_OK):
            raise InputError("is read-only: refusing to replace it", Location(file=path))
        return real, stat.S_IMODE(st.st_mode)
    folder = os.path.dirname(real) or "."
    if not os.path.isdir(folder):
        raise InputError(
            f"cannot write: folder {os.path.dirname(path) or '.'} does not exist", Location(path)
        )
    return real, None


def _umask_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def remove_stale_temps(folder: str) -> None:
    """Remove ``.kubedra-tmp-<pid>-*`` files in ``folder`` owned by this user whose process has ended."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    me = os.getuid() if hasattr(os, "getuid") else None
    for name in names:
        if not name.startswith(TEMP_PREFIX):
            continue
        pid_text = name[len(TEMP_PREFIX) :].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        full = os.path.join(folder, name)
        try:
            st = os.lstat(full)
            if me is not None and st.st_uid != me:
                continue
            if _alive(int(pid_text)):
                continue
            if stat.S_ISDIR(st.st_mode):
                _rmtree(full)
            else:
                os.unlink(full)
        except OSError:
            continue


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _rmtree(path: str) -> None:
    import shutil  # noqa: PLC0415

    shutil.rmtree(path, ignore_errors=True)


def temp_name(folder: str) -> str:
    return os.path.join(
        folder, f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
    )  # secrets.token_hex(4), without importing secrets


class _Terminated(BaseException):
    """SIGTERM during a write: unwinds like Ctrl-C so temporaries are removed."""


@contextlib.contextmanager
def terminate_cleanly() -> Iterator[None]:
    """While writing, SIGTERM raises instead of killing the process, so ``finally`` blocks remove temporaries;
    the process then exits 143 as it would have."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    except _Terminated:
        raise SystemExit(128 + signal.SIGTERM) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def _write_temp(folder: str, text: str, mode: int) -> str:
    tmp = temp_name(folder)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_files(
    texts: Mapping[str, str], *, overwrite_readonly: bool = False, make_folders: bool = False
) -> None:
    """Write every ``path -> text`` or none: all temporaries are written first, then renamed into place.

    Checks (not a regular file, read-only, missing folder) run for every path before anything is written.
    A rename cannot fail for lack of space, so once the temporaries exist the renames all go through."""
    plan: list[tuple[str, str, int]] = []
    for path, text in texts.items():
        if make_folders:
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                try:
                    os.makedirs(folder, exist_ok=True)
                except OSError as e:
                    raise InputError(f"cannot create folder: {e.strerror}", Location(file=folder)) from e
        real, mode = resolve_target(path, overwrite_readonly=overwrite_readonly)
        plan.append((real, text, _umask_mode() if mode is None else mode))
    temps: list[tuple[str, str]] = []
    with terminate_cleanly():
        try:
            for folder in sorted({os.path.dirname(real) or "." for real, _, _ in plan}):
                remove_stale_temps(folder)
            for real, text, mode in plan:
                try:
                    temps.append((_write_temp(os.path.dirname(real) or ".", text, mode), real))
                except OSError as e:
                    raise InputError(f"cannot write: {e.strerror}", Location(file=real)) from e
            while temps:
                tmp, real = temps[0]
                os.replace(tmp, real)
                temps.pop(0)
        finally:
            for tmp, _ in temps:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def write_atomic(path: str, text: str) -> None:
    """Replace (or create) one regular file with ``text``; see the module docstring."""
    write_files({path: text})


@contextlib.contextmanager
def open_atomic(path: str) -> Iterator[AtomicFile]:
    """A binary file to write ``path``'s new content into, piece by piece, with :func:`write_atomic`'s
    guarantees: the target is checked first, the content goes to a temporary beside it that is fsynced and
    renamed over it when the block ends normally, and removed on any error, Ctrl-C or SIGTERM. A failed write
    raises InputError (``cannot write``), never a bare OSError a caller could mistake for a network error."""
    real, mode = resolve_target(path)
    folder = os.path.dirname(real) or "."
    with terminate_cleanly():
        remove_stale_temps(folder)
        tmp = temp_name(folder)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as e:
            raise InputError(f"cannot write: {e.strerror}", Location(file=real)) from e
        try:
            with os.fdopen(fd, "wb") as fh:
                yield AtomicFile(fh, real)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, _umask_mode() if mode is None else mode)
            os.replace(tmp, real)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise InputError(f"cannot write: {e.strerror}", Location(file=real)) from e
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


class AtomicFile:
    """A binary file whose write/seek/truncate turn OSError (disk full) into InputError at once."""

    def __init__(self, fh: BinaryIO, where: str) -> None:
        self.fh = fh
        self.where = where

    def _fail(self, e: OSError) -> InputError:
        return InputError(f"cannot write: {e.strerror}", Location(file=self.where))

    def write(self, data: bytes) -> int:
        try:
            return self.fh.write(data)
        except OSError as e:
            raise self._fail(e) from e

    def tell(self) -> int:
        return self.fh.tell()

    def seek(self, pos: int) -> int:
        try:
            return self.fh.seek(pos)
        except OSError as e:
            raise self._fail(e) from e

    def truncate(self) -> int:
        try:
            return self.fh.truncate()
        except OSError as e:
            raise self._fail(e) from e
