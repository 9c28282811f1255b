"""A hostile file's load, run in a child process under a memory limit, with its peak measured.

Why a child: a loader that allocates what a forged header asks for must fail the test, not swap
the machine or take the test run down; ``RLIMIT_DATA`` turns such an allocation into a
MemoryError in the child, and the child's peak resident memory (``VmHWM``) says how much a
refused file cost before it was refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

LIMIT_MB = 3072
"""The child's data limit: torch and the package need about 600 MB; a regression that builds
what a forged file asks for (gigabytes) dies here instead of on the machine."""

_PRELUDE = """
import json, resource, sys, traceback
resource.setrlimit(resource.RLIMIT_DATA, ({limit}, {limit}))
{imports}
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


def run_limited(
    body: str,
    *,
    imports: str = "import torch, numpy, tablegym.envs",
    limit_mb: int = LIMIT_MB,
    cwd: str | os.PathLike | None = None,
    timeout: float = 300,
) -> Outcome:
    """Run ``body`` (Python statements) in a child under ``limit_mb`` of data, after ``imports``
    (which count toward the peak but not toward ``grew_mb``)."""
    script = _PRELUDE.format(
        limit=limit_mb << 20, imports=imports, body=textwrap.indent(textwrap.dedent(body).strip() or "pass", "    ")
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, cwd=cwd or Path.cwd())
    for line in done.stdout.splitlines():
        if line.startswith("HOSTILE-RESULT "):
            return Outcome(**json.loads(line[len("HOSTILE-RESULT ") :]))
    raise AssertionError(f"the child died (exit {done.returncode}): {done.stderr[-2000:]}")
