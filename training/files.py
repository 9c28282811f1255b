"""Writing into a run folder without following a link planted there, and one training at a time.

A run folder is the user's, but what it holds may come from elsewhere (a copied or unpacked run,
another user's planted link): a file or folder of the run that is a symbolic link must never
redirect a write. So every file a trainer writes there goes through one of these:

- ``write_text_atomic`` / ``write_bytes_atomic`` / ``open_atomic`` (a file object) / ``replacing``
  (a path, for a library that saves by name, such as SB3's ``model.save``): the bytes go to a new
  file of a random name in the same folder, created with ``O_EXCL | O_NOFOLLOW``, then
  ``os.replace`` puts it in place. ``os.replace`` replaces a link itself, never its target, and a
  reader never sees half a file;
- ``open_append``: a log that grows (JSON lines), opened with ``O_NOFOLLOW``; a link is refused;
- ``real_folder``: a sub-folder of the run (``nets/``, ``demos/``), made, and refused if a link;
- ``RunLock``: the run folder's ``.lock`` (opened with ``O_NOFOLLOW``), locked with ``flock`` for
  the training's whole life and holding its pid and command line. A second training into the
  folder is refused with one line naming that holder (``RunFolderError``); the lock goes with the
  process that holds it, however it ends.

TensorBoard's event files are opened by TensorBoard itself: ``event_file_suffix`` gives them a
random end, so no file planted beforehand can stand at their name.

It imports nothing heavier than the standard library (Friday's workers and the SB3 scripts use it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shlex
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, NoReturn

try:
    import fcntl
except ImportError:  # no flock here (Windows): runs are not locked
    fcntl = None  # type: ignore[assignment]  # the module or None, as typeshed cannot say

__all__ = [
    "RunFolderError",
    "RunLock",
    "copy_file_atomic",
    "event_file_suffix",
    "exit_refused",
    "lock_run_dir",
    "open_append",
    "open_atomic",
    "prepare_run_dir",
    "real_folder",
    "replacing",
    "run_dir_problem",
    "write_bytes_atomic",
    "write_text_atomic",
]

LOCK_NAME = ".lock"
"""the lock file of a run folder"""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FLAGS = os.O_CREAT | os.O_EXCL | os.O_WRONLY | _NOFOLLOW


class RunFolderError(ValueError):
    """A run folder, or a file of it, that a training cannot use as it is: in use by another
    training, or a symbolic link where the run's own file or folder goes. The message is one line."""


def _new_temp(path: Path) -> tuple[int, Path]:
    """A new file beside ``path`` (a random name, created exclusively, never through a link),
    open for writing: (descriptor, its path). Its suffix is ``path``'s, so a library that adds
    one when missing (NumPy's ``.npz``, SB3's ``.zip``) keeps the name given."""
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp{path.suffix}")
        try:
            return os.open(tmp, _FLAGS, 0o666), tmp
        except FileExistsError:  # the same 48 random bits twice: draw again
            continue


def _discard(tmp: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)


@contextlib.contextmanager
def replacing(path: str | os.PathLike) -> Iterator[Path]:
    """A new temporary file's path beside ``path``, for a library that writes by name; when the
    block ends without an error the file replaces ``path`` (a link there is replaced, its target
    untouched), otherwise it is removed."""
    path = Path(path)
    fd, tmp = _new_temp(path)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        _discard(tmp)


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike, mode: str = "wb") -> Iterator[IO]:
    """A file object (``mode`` "wb" or "w") on a new temporary file beside ``path``, which
    replaces ``path`` when the block ends without an error (and is removed otherwise)."""
    if mode not in ("wb", "w"):
        raise ValueError(f"open_atomic writes a new file: mode 'wb' or 'w', got {mode!r}")
    path = Path(path)
    fd, tmp = _new_temp(path)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as f:
            yield f
        os.replace(tmp, path)
    finally:
        _discard(tmp)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file and ``os.replace``; ``path``."""
    with open_atomic(path, "wb") as f:
        f.write(data)
    return Path(path)


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and ``os.replace``; ``path``."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def copy_file_atomic(source: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Copy the file ``source`` to ``path`` through a temporary file and ``os.replace``; ``path``."""
    with open(source, "rb") as src, open_atomic(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return Path(path)


def open_append(path: str | os.PathLike, mode: str = "a") -> IO:
    """``path`` opened to append (``mode`` "a" or "ab"), made if missing; a symbolic link or
    anything but a plain file there is refused (RunFolderError), never written through."""
    if mode not in ("a", "ab"):
        raise ValueError(f"open_append appends: mode 'a' or 'ab', got {mode!r}")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW
    try:
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o666)  # a FIFO planted there does not block
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise RunFolderError(
                f"{str(path)!r} is a symbolic link; records are appended to a plain file only "
                f"(remove the link or give another file)"
            ) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise RunFolderError(f"{str(path)!r} is not a plain file; records are appended to a plain file only")
    os.set_blocking(fd, True)
    return os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8")


def real_folder(path: str | os.PathLike) -> Path:
    """The folder ``path`` (its parent must exist), made if missing; a symbolic link or a file
    there is refused (RunFolderError): what a run writes stays in the run folder."""
    path = Path(path)
    try:
        os.mkdir(path)
    except FileExistsError:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            raise RunFolderError(
                f"{str(path)!r} is a symbolic link (to {os.readlink(path)!r}); a run writes only "
                f"into its own folders: remove the link"
            ) from None
        if not stat.S_ISDIR(mode):
            raise RunFolderError(f"{str(path)!r} is a file, where the run keeps a folder") from None
    return path


def run_dir_problem(path: str | os.PathLike[str], flag: str = "--run-dir") -> str | None:
    """Why ``path`` cannot be a run folder as given (one line), or None: a symbolic link there is
    refused, naming the folder to give instead (so that a link planted at a run folder's name,
    by an unpacked archive for one, never sends a training's files elsewhere)."""
    if os.path.islink(path):
        return (
            f"{flag} {str(path)!r} is a symbolic link (to {os.readlink(path)!r}); give the folder itself: "
            f"{flag} {os.path.realpath(path)}"
        )
    return None


def prepare_run_dir(path: str | os.PathLike, flag: str = "--run-dir") -> Path:
    """The run folder ``path``, made with its missing parents; a symbolic link at ``path`` itself
    (``run_dir_problem``) or a file there is refused (RunFolderError)."""
    path = Path(path)
    problem = run_dir_problem(path, flag)
    if problem:
        raise RunFolderError(problem)
    if path.exists() and not path.is_dir():
        raise RunFolderError(f"{flag} {str(path)!r} is a file, not a folder")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _command_line() -> str:
    """This process's command line as typed (the program's name without its folder)."""
    argv = list(sys.argv) or ["python"]
    return shlex.join([os.path.basename(argv[0]) or "python", *argv[1:]])


class RunLock:
    """The exclusive lock of a run folder (``flock`` on its ``.lock``), held by this process
    until ``release`` or the process ends. ``lock_run_dir`` takes it; taking it again in the same
    process (a resumed ``Run`` in a test, a trainer's second phase) counts up and shares it."""

    _held: dict[tuple[int, int], RunLock] = {}
    """the locks this process holds, by the folder's (device, inode)"""

    def __init__(self, folder: Path, key: tuple[int, int], fd: int) -> None:
        self.folder, self.key, self.fd = folder, key, fd
        self.count = 1

    def release(self) -> None:
        """Give the lock back (when every taker has); the ``.lock`` file stays, empty."""
        self.count -= 1
        if self.count == 0 and self.fd >= 0:
            RunLock._held.pop(self.key, None)
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = -1


def _open_lock(path: Path) -> int:
    """The lock file's descriptor, read-write, made if missing; a link there is removed first (a
    run never makes one, so it holds no lock) and the file made anew."""
    flags = os.O_RDWR | os.O_CREAT | _NOFOLLOW
    for _ in range(2):
        try:
            fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o666)
        except OSError as err:
            if err.errno != errno.ELOOP:
                raise
            os.unlink(path)
            continue
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            break
        return fd
    raise RunFolderError(f"{str(path)!r} is not a plain file; the run folder's lock must be one (remove it)")


def lock_run_dir(folder: str | os.PathLike, flag: str = "--run-dir") -> RunLock:
    """Take the run folder's lock (the folder must exist) for this process, writing its pid and
    command line into ``.lock``; a folder another process trains into is refused with one line
    naming that process (RunFolderError)."""
    folder = Path(folder)
    st = os.stat(folder)
    key = (st.st_dev, st.st_ino)
    held = RunLock._held.get(key)
    if held is not None:
        held.count += 1
        return held
    fd = _open_lock(folder / LOCK_NAME)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            os.close(fd)
            raise
        holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").split("\n", 1)
        os.close(fd)
        pid, command = holder[0].strip(), (holder[1].strip() if len(holder) > 1 else "")
        who = f"pid {pid}" + (f" ({command[:300]})" if command else "") if pid.isdigit() else "another process"
        raise RunFolderError(
            f"run folder {str(folder)!r} is in use by {who}; two trainings into one folder would "
            f"overwrite each other: wait for it to end or give another {flag}"
        ) from None
    os.set_blocking(fd, True)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n{' '.join(_command_line().split())}\n".encode(), 0)
    lock = RunLock(folder, key, fd)
    RunLock._held[key] = lock
    return lock


def event_file_suffix() -> str:
    """A random end for a TensorBoard event file's name (``SummaryWriter(filename_suffix=...)``):
    TensorBoard opens the file by name, so no name known in advance is left to plant a link at."""
    return f".{secrets.token_hex(8)}"


def exit_refused(prog: str, err: Exception) -> NoReturn:
    """Print ``PROG: error: MESSAGE`` (one line) and exit with status 2, a usage error's."""
    print(f"{prog}: error: {err}", file=sys.stderr)
    raise SystemExit(2)
