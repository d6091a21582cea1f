"""Run a Python spec in a child process, bounded in time and memory, and bring its cluster back as plain data.

The parent (`run_python_spec`) starts `sys.executable` in a new session with the child's stdout and stderr captured
(only their tails are kept), waits at most the spec timeout, then kills the child's whole process group.  The child
(`_child`) lowers its address space to PYTHON_SPEC_MEMORY_BYTES, runs the spec as `runpy.run_path` would (the spec's
folder first on sys.path), and writes one JSON document to a result file: either the cluster, dumped from the model,
or findings (exceptions with the line of the innermost frame in the spec, pydantic errors with their paths).  The
parent never trusts the cluster: `teton.spec.load` validates the data again, as it does for YAML.
"""

from __future__ import annotations

import ast
import builtins
import json
import math
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any, NotRequired, Required, TypedDict

from teton import environment, limits
from teton.findings import Finding, SpecError

ENV_TIMEOUT = "TETON_SPEC_TIMEOUT"
_RESULT_MAX_BYTES = limits.MAX_SPEC_BYTES
_INFRA = str(Path(__file__).resolve().parents[2])  # the folder holding the teton package



class _FindingDoc(TypedDict):
    """One finding as the child writes it to the result file (the parent checks every field again)."""

    path: str
    rule: str
    message: str
    line: NotRequired[int | None]


class _ResultDoc(TypedDict, total=False):
    """What the child writes: ok with the cluster (as plain data) and the line binding it, or not ok with findings."""

    ok: Required[bool]
    cluster: Any
    line: int | None
    findings: list[_FindingDoc]


# Runs first in the child: the memory limit before anything is imported, then the runner.
_BOOT = """\
import resource, sys
want = int(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
for have in (soft, hard):
    if have != resource.RLIM_INFINITY:
        want = min(want, have)
resource.setrlimit(resource.RLIMIT_AS, (want, want))
if sys.path and sys.path[0] in ('', '.'):
    del sys.path[0]  # not the caller's working directory: the spec's folder goes there
from teton.spec.pyspec import _child
_child(sys.argv[1], sys.argv[2], sys.argv[4])
"""


# --------------------------------------------------------------------------------------------------- parent


def spec_timeout(timeout: float | None, filename: str) -> tuple[float, str]:
    """(seconds, where they come from): `timeout` if given, else $TETON_SPEC_TIMEOUT, else PYTHON_SPEC_TIMEOUT_S."""
    source = "load_spec(timeout=...)"
    if timeout is None:
        raw = (environment.get(ENV_TIMEOUT) or "").strip()
        if raw:
            source = ENV_TIMEOUT
            try:
                timeout = float(raw)
            except ValueError:
                raise SpecError([Finding(filename, "", f"{ENV_TIMEOUT} must be a number of seconds (got {raw[:40]!r})",
                                         rule="python")]) from None
        else:
            timeout, source = limits.PYTHON_SPEC_TIMEOUT_S, "PYTHON_SPEC_TIMEOUT_S"
    if not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0:
        raise SpecError([Finding(filename, "", f"the Python spec timeout ({source}) must be a positive number of "
                                               f"seconds (got {timeout!r})", rule="python")])
    return float(timeout), source


def run_python_spec(path: Path, timeout: float | None = None, binding: str = "cluster") -> tuple[Any, int | None]:
    """(the cluster as plain data, line that binds `cluster`) of the Python spec at `path`; raises SpecError.
    `binding`: "site" for a site spec (it binds `site` to a teton.spec.site.Site)."""
    filename = str(path)
    seconds, source = spec_timeout(timeout, filename)
    env = environment.for_untrusted_child()      # no TETON_SECRET_* or TETON_CACHE_KEY: a spec is code
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_INFRA, env.get("PYTHONPATH", "")) if p)
    env.pop("PYTHONSTARTUP", None)
    with tempfile.TemporaryDirectory(prefix="teton-pyspec-") as tmp:
        result = Path(tmp) / "result.json"
        cmd = [sys.executable, "-c", _BOOT, str(path.resolve()), str(result), str(limits.PYTHON_SPEC_MEMORY_BYTES),
               binding]
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=env, start_new_session=True, close_fds=True)
        except OSError as exc:
            raise SpecError([Finding(filename, "", f"cannot start Python to run the spec: {exc}", rule="python")]) \
                from None
        timed_out, err_tail = _supervise(proc, seconds)
        tail = _tail(err_tail)
        if timed_out:
            limit = f"PYTHON_SPEC_TIMEOUT_S = {limits.PYTHON_SPEC_TIMEOUT_S:g} s"
            if source != "PYTHON_SPEC_TIMEOUT_S":
                limit += f", here {source} = {seconds:g} s"
            raise SpecError([Finding(filename, "", f"the Python spec did not finish within {seconds:g} s and was "
                                                   f"stopped (limit {limit}){tail}", rule="limit")])
        doc = _read_result(result)
    code = proc.returncode
    if doc is None:
        if code is not None and code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
            raise SpecError([Finding(filename, "", f"the Python spec {how}{tail}", rule="python")])
        raise SpecError([Finding(filename, "", f"the Python spec exited with code {code} before binding `{binding}`"
                                               f"{tail}", rule="python")])
    if doc.get("ok") is True and "cluster" in doc:
        line = doc.get("line")
        return doc["cluster"], line if isinstance(line, int) and not isinstance(line, bool) else None
    findings = []
    for f in doc.get("findings") or []:
        if not isinstance(f, dict):
            continue
        line = f.get("line")
        findings.append(Finding(filename, str(f.get("path", "")), str(f.get("message", "")) + tail,
                                rule=str(f.get("rule", "python")),
                                line=line if isinstance(line, int) and not isinstance(line, bool) else None))
        tail = ""  # quote it once
    if not findings:
        findings = [Finding(filename, "", f"the Python spec's result cannot be read{tail}", rule="python")]
    raise SpecError(findings)


def _supervise(proc: subprocess.Popen[bytes], seconds: float) -> tuple[bool, bytes]:
    """Drain the child's output (keeping the tail of stderr) until it exits or time runs out; kill its group."""
    keep = limits.PYTHON_SPEC_STDERR_TAIL * 4  # bytes: enough for that many characters of UTF-8
    err = bytearray()
    deadline = time.monotonic() + seconds
    timed_out = False
    sel = selectors.DefaultSelector()
    try:
        assert proc.stdout is not None and proc.stderr is not None
        sel.register(proc.stdout, selectors.EVENT_READ, False)
        sel.register(proc.stderr, selectors.EVENT_READ, True)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = _exited(proc) is None
                break
            events = sel.select(min(left, 0.05)) if sel.get_map() else []
            for key, _ in events:
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                elif key.data:
                    err += chunk
                    del err[:-keep]
            if not sel.get_map():
                if _exited(proc) is not None:
                    break
                time.sleep(min(0.01, max(left, 0)))
            elif not events and _exited(proc) is not None:
                break  # exited, and nothing more comes (a grandchild may hold the pipes open)
        for key, _ in sel.select(0) if sel.get_map() else []:  # what the child wrote just before it exited
            chunk = os.read(key.fd, 1 << 16)
            if key.data:
                err += chunk
                del err[:-keep]
    finally:
        sel.close()
        try:  # the child and anything it started (it is the leader of its own session)
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    return timed_out, bytes(err)


def _exited(proc: subprocess.Popen[bytes]) -> int | None:
    """The child's pid once it has exited, without reaping it (so that its process group can still be killed)."""
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return proc.pid
    return info.si_pid if info is not None and info.si_pid else None


def _tail(err: bytes) -> str:
    text = err.decode("utf-8", "replace").strip()
    if not text:
        return ""
    text = text[-limits.PYTHON_SPEC_STDERR_TAIL:]
    lines = text.splitlines()[-12:]
    return "; its stderr ended with:\n    " + "\n    ".join(lines)


def _read_result(result: Path) -> dict[str, Any] | None:
    try:
        with result.open("rb") as fh:
            raw = fh.read(_RESULT_MAX_BYTES + 1)
    except OSError:
        return None
    if len(raw) > _RESULT_MAX_BYTES:
        return {"ok": False, "findings": [{"path": "cluster", "rule": "limit", "message":
                f"the cluster the Python spec built is larger than MAX_SPEC_BYTES = {limits.MAX_SPEC_BYTES:,} "
                "bytes as JSON"}]}
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


# --------------------------------------------------------------------------------------------------- child


def _child(spec: str, result: str, binding: str = "cluster") -> None:
    """Run the spec at `spec` (an absolute path) and write the outcome to `result`; never returns."""
    try:
        doc = _run(spec, binding)
    except BaseException as exc:  # the runner itself must always answer
        doc = {"ok": False, "findings": [{"path": "", "rule": "python", "message":
               f"the Python spec could not be run: {type(exc).__name__}: {_short(exc)}"}]}
    try:
        with open(result, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, allow_nan=True)
    except BaseException:
        os._exit(3)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is None:  # no console: sys.__stdout__ and sys.__stderr__ may be None
            continue
        try:
            stream.flush()
        except BaseException:  # a spec may have closed or replaced them
            pass
    os._exit(0)  # no atexit handlers, no waiting for threads the spec left running


def _run(spec: str, binding: str = "cluster") -> _ResultDoc:
    from pydantic import BaseModel

    from teton.spec.model import Cluster
    from teton.spec.site import Site

    root: type[BaseModel] = Site if binding == "site" else Cluster

    try:
        with open(spec, "rb") as fh:
            source = fh.read()
        code = compile(source, spec, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return _failed([{"path": "", "rule": "python", "line": exc.lineno,
                         "message": f"the Python spec does not compile: SyntaxError: {exc.msg}"}])
    except (OSError, ValueError) as exc:
        return _failed([{"path": "", "rule": "python", "message": f"the Python spec does not compile: {exc}"}])

    sys.argv = [spec]
    sys.path.insert(0, os.path.dirname(spec))
    name = "<run_path>"  # as runpy.run_path: `if __name__ == "__main__":` blocks do not run
    module = types.ModuleType(name)
    scope = module.__dict__
    scope.update(__file__=spec, __cached__=None, __loader__=None, __package__=None, __spec__=None,
                 __builtins__=builtins)
    sys.modules[name] = module  # as runpy: dataclasses and pickling look the module up
    exit_code, said = None, ""
    try:
        exec(code, scope)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int) and not isinstance(exc.code, bool):
            exit_code = exc.code or 0
        else:  # sys.exit("message"): Python would print the message and exit with 1
            exit_code, said = 1, f" ({_short_repr(exc.code)})"
    except BaseException as exc:  # a user's spec may raise anything: report it
        return _failed(_exception_findings(exc, spec))

    cluster = scope.get(binding)
    if exit_code is not None and (exit_code != 0 or not isinstance(cluster, root)):
        when = "after" if isinstance(cluster, root) else "before"
        return _failed([{"path": "", "rule": "python",
                         "message": f"the Python spec exited with code {exit_code}{said} {when} binding `{binding}`"}])
    if not isinstance(cluster, root):
        got = "nothing" if binding not in scope else f"a value of type {type(cluster).__name__}"
        where = "teton.spec.Cluster" if root is Cluster else "teton.spec.site.Site"
        return _failed([{"path": binding, "rule": "python",
                         "message": f"a Python spec must bind `{binding}` to a {where} (it binds {got})"}])
    try:
        data = cluster.model_dump(mode="python", warnings=False)
        json.dumps(data, allow_nan=True)  # fails here, not when writing the result
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # a model_construct'ed cluster may hold anything
        return _failed([{"path": "cluster", "rule": "python",
                         "message": f"the cluster cannot be sent as JSON: {type(exc).__name__}: {_short(exc)}"}])
    return {"ok": True, "cluster": data, "line": _binding_line(source, binding)}


def _failed(findings: list[_FindingDoc]) -> _ResultDoc:
    return {"ok": False, "findings": findings}


def binds(path: Path, name: str) -> bool:
    """Whether the Python spec at `path` binds `name` at its top level (read, not run; a file larger than a spec may
    be is not one)."""
    try:
        if path.stat().st_size > limits.MAX_SPEC_BYTES:
            return False
        return _binding_line(path.read_bytes(), name) is not None
    except OSError:
        return False


def _binding_line(source: bytes, binding: str = "cluster") -> int | None:
    """Line of the last top-level statement that binds `cluster` (where schema errors of the cluster point)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    line = None
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else \
            [stmt.target] if isinstance(stmt, ast.AnnAssign | ast.AugAssign) else []
        if any(isinstance(t, ast.Name) and t.id == binding for t in targets):
            line = stmt.lineno
    return line


def _exception_findings(exc: BaseException, spec: str) -> list[_FindingDoc]:
    """An exception of the spec: one finding, or one per pydantic error, at the innermost line in the spec."""
    from pydantic import ValidationError

    from teton.findings import join_path

    line, outside = None, None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == spec:
            line, outside = tb.tb_lineno, None
        elif line is not None:
            outside = f"{os.path.basename(code.co_filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) and exc.filename == spec and exc.lineno:
        line = exc.lineno
    if isinstance(exc, ValidationError):
        from pydantic import BaseModel

        from teton.spec import model as spec_model
        from teton.spec.messages import schema_message

        title = exc.title
        root = getattr(spec_model, title, None)
        root = root if isinstance(root, type) and issubclass(root, BaseModel) else spec_model.Cluster
        out: list[_FindingDoc] = []
        for e in exc.errors(include_url=False)[:limits.MAX_SCHEMA_FINDINGS]:
            msg = schema_message(e, root)
            out.append({"path": join_path(tuple(e["loc"])), "rule": "schema", "line": line,
                        "message": msg if title == "Cluster" else f"{title}(...): {msg}"})
        return out
    if isinstance(exc, MemoryError):
        return [{"path": "", "rule": "limit", "line": line, "message": "the Python spec ran out of memory (limit "
                 f"PYTHON_SPEC_MEMORY_BYTES = {limits.PYTHON_SPEC_MEMORY_BYTES:,} bytes of address space)"}]
    where = f" (raised in {outside})" if outside else ""
    return [{"path": "", "rule": "python", "line": line,
             "message": f"the Python spec failed: {type(exc).__name__}: {_short(exc)}{where}"}]


def _short(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # a user's exception's __str__ may raise too
        text = "<unprintable>"
    return text if len(text) <= 500 else text[:500] + "..."


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."
