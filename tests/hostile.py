"""A hostile file's load, run in a child process under a memory limit, with its peak measured.

Why a child: a loader that allocates what a forged header asks for must fail the test, not swap
the machine or take the test run down; ``RLIMIT_DATA`` turns such an allocation into a
MemoryError in the child, and the child's peak resident memory (``VmHWM``) says how much a
refused file cost before it was refused.

Why a fork server: the imports (torch, the package, SB3) took most of a child's time, and each
test paid them again. A server process sets the limit and runs a test's ``imports`` once; each
load is then a child forked from it, with its own limit, its own peak (Linux starts a forked
child's ``VmHWM`` at its resident size when forked) and its own exit, as a fresh interpreter
would have. A server is kept for each set of imports, working folder and environment. Forking
is safe only while the server has one thread (a forked child of a process whose OpenMP threads
ran, as torch's do once it computes, hangs at its first parallel loop), so ``imports`` only
import, ``setup`` (a model to load into, say) runs in each child, and a server that finds a
second thread after its imports is not used: each load then runs in a fresh interpreter.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

LIMIT_MB = 3072
"""The child's data limit: torch and the package need about 600 MB; a regression that builds
what a forged file asks for (gigabytes) dies here instead of on the machine."""

_LIMIT = """
import json, resource, sys, traceback
resource.setrlimit(resource.RLIMIT_DATA, ({limit}, {limit}))
"""
_MEASURED = """
{setup}
def peak():  # this process's own high-water mark (ru_maxrss would start at the forking parent's)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
before = peak()
out = {{"ok": True, "error": None, "message": ""}}
try:
{body}
except BaseException as exc:
    out.update(ok=False, error=type(exc).__name__, message=str(exc), trace=traceback.format_exc()[-2000:])
out["peak_mb"] = peak()
out["grew_mb"] = out["peak_mb"] - before
print("HOSTILE-RESULT " + json.dumps(out))
"""

_SERVER = """
import os, sys, time
_proto = os.dup(1)  # replies go here; anything the imports print goes nowhere
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
exec(compile(sys.argv[1], "<limit>", "exec"))
exec(compile(sys.argv[2], "<imports>", "exec"))
_probe = os.fork()  # a child that runs torch's and numpy's thread pools: it hangs where forking is unsafe
if _probe == 0:
    if "torch" in sys.modules:
        sys.modules["torch"].ones(1 << 22).sum(), sys.modules["torch"].ones(256, 256) @ sys.modules["torch"].ones(256, 256)
    if "numpy" in sys.modules:
        sys.modules["numpy"].ones((256, 256)) @ sys.modules["numpy"].ones((256, 256))
    os._exit(0)
for _ in range(600):
    if os.waitpid(_probe, os.WNOHANG)[0]:
        os.write(_proto, b"safe\\n")
        break
    time.sleep(0.05)
else:
    os.kill(_probe, 9)
    os.write(_proto, b"unsafe\\n")
    sys.exit(0)
while True:
    _request = sys.stdin.buffer.readline()
    if not _request:
        sys.exit(0)
    _request = json.loads(_request)
    _pid = os.fork()
    if _pid == 0:
        break
    os.write(_proto, b"pid %d\\n" % _pid)
    os.write(_proto, b"exit %d\\n" % os.waitstatus_to_exitcode(os.waitpid(_pid, 0)[1]))
# the forked child: its own output files and folder, then the script, then what an interpreter
# does at its exit but tearing down its modules (seconds, and nothing a test reads)
os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
os.dup2(os.open(_request["stdout"], os.O_WRONLY), 1)
os.dup2(os.open(_request["stderr"], os.O_WRONLY), 2)
os.close(_proto)
os.chdir(_request["cwd"])
import atexit, threading, traceback
try:
    exec(compile(_request["script"], "<string>", "exec"))
    _code = 0
except SystemExit as _exit:
    _code = _exit.code if isinstance(_exit.code, int) else (_exit.code is not None)
except BaseException:
    traceback.print_exc()
    _code = 1
for _thread in threading.enumerate():
    if _thread is not threading.main_thread() and not _thread.daemon:
        _thread.join()
atexit._run_exitfuncs()
sys.stdout.flush(), sys.stderr.flush()
os._exit(_code)
"""


@dataclass(frozen=True)
class Outcome:
    """What the child reported: whether the body ran to its end, the exception's class and
    message otherwise, its peak resident memory and how much of it the body added."""

    ok: bool
    error: str | None
    message: str
    peak_mb: float
    grew_mb: float
    trace: str = ""


class _Server:
    """A fork server: ``python -c _SERVER limit imports``, its requests on stdin, replies on stdout."""

    def __init__(self, limit: str, imports: str, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER, limit, imports],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
        )
        self.pending = b""
        self.usable = self._line(time.monotonic() + 600) == "safe"
        if not self.usable:
            self.proc.kill()

    def _line(self, deadline: float) -> str | None:
        """The server's next reply line, or None when it ended or ``deadline`` passed."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def run(self, script: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
        """``script`` in a child forked from the server, as ``subprocess.run`` would report it."""
        with tempfile.TemporaryDirectory() as folder:
            out, err = Path(folder, "stdout"), Path(folder, "stderr")
            out.touch()
            err.touch()
            request = {"script": script, "cwd": str(cwd), "stdout": str(out), "stderr": str(err)}
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
            deadline = time.monotonic() + timeout
            pid = self._line(deadline)
            if pid is None or not pid.startswith("pid "):
                raise AssertionError(f"the fork server died: {pid!r}")
            status = self._line(deadline)
            if status is None:
                os.kill(int(pid.split()[1]), 9)
                self._line(time.monotonic() + 60)
                raise subprocess.TimeoutExpired(script, timeout)
            return subprocess.CompletedProcess(script, int(status.split()[1]), out.read_text(), err.read_text())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


_SERVERS: dict[tuple, _Server] = {}


@atexit.register
def _close_servers() -> None:
    for server in _SERVERS.values():
        server.close()
    _SERVERS.clear()


def run_limited(
    body: str,
    *,
    imports: str = "import torch, numpy, tablegym.envs",
    setup: str = "",
    limit_mb: int = LIMIT_MB,
    cwd: str | os.PathLike | None = None,
    timeout: float = 300,
) -> Outcome:
    """Run ``body`` (Python statements) in a child under ``limit_mb`` of data, after ``imports``
    (statements that only import) and ``setup`` (any statements), which count toward the peak
    but not toward ``grew_mb``."""
    where = Path(cwd or Path.cwd())
    limit = _LIMIT.format(limit=limit_mb << 20)
    measured = _MEASURED.format(setup=setup, body=textwrap.indent(textwrap.dedent(body).strip() or "pass", "    "))
    key = (limit, imports, str(where), tuple(sorted((k, v) for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST")))
    if key not in _SERVERS:
        _SERVERS[key] = _Server(limit, imports, where)
    server = _SERVERS[key]
    if server.usable:
        done = server.run(measured, where, timeout)
    else:
        script = limit + imports + "\n" + measured
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, cwd=where)
    for line in done.stdout.splitlines():
        if line.startswith("HOSTILE-RESULT "):
            return Outcome(**json.loads(line[len("HOSTILE-RESULT ") :]))
    raise AssertionError(f"the child died (exit {done.returncode}): {done.stderr[-2000:]}")
