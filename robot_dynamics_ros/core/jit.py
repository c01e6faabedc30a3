"""
Compiling the core's own Python functions with numba, cached on disk across processes.

Why a module file: numba caches machine code next to the file of a function's code, keyed by
that file's time stamp; a function that calls another compiled function (the drivers calling the
Newton-Euler passes) would keep stale code when only the callee's file changed.  So the texts of
the functions (``inspect.getsource``: literally the core's functions, not copies) and of the
constants they read are written into one module in the cache directory, named by a hash of the
whole text: any change to any of them is a new file, compiled anew; an unchanged one is loaded
by the next process in milliseconds instead of compiled again (seconds).

Files are only ever created whole (``files.write_atomically``; numba writes its own cache files
the same way), so concurrent processes are safe.  Cache directory:
``$ROBOT_DYNAMICS_ROS_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME`` (default ``~/.cache``)
``/robot_dynamics_ros/kernels``; if it cannot be written, the functions are compiled without a
disk cache.  (The simulator's compiled modules live beside, in ``simulation``:
``core/simulation/compiled.py`` shares these helpers.)  Numba's ``error_model="numpy"``: a
division by zero gives inf/NaN, never an exception (the callers check their results where it
matters).
"""
from __future__ import annotations

import hashlib
import inspect
import os
import sys
import threading
import types
import warnings
from pathlib import Path

from .files import write_atomically

CACHE_ENVIRONMENT_VARIABLE = "ROBOT_DYNAMICS_ROS_CACHE_DIR"
INLINE = "inline"
_WARNED: set = set()
_LOCK = threading.Lock()


class CompilationWarning(UserWarning):
    """Numba is missing or could not compile: the same code runs as plain Python."""


def cache_directory(kind: str = "kernels") -> Path:
    """
    Return the directory of the compiled modules of ``kind`` (see the module docstring).

    ``$ROBOT_DYNAMICS_ROS_CACHE_DIR`` itself if set, else the ``kind`` directory under
    ``$XDG_CACHE_HOME`` (default ``~/.cache``) ``/robot_dynamics_ros``.
    """
    chosen = os.environ.get(CACHE_ENVIRONMENT_VARIABLE)
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "robot_dynamics_ros" / kind


def numba_unavailable() -> str | None:
    """Return why numba cannot be used ("numba is not importable: ..."), or None if it can."""
    if os.environ.get("ROBOT_DYNAMICS_ROS_NO_NUMBA"):
        return "numba disabled by ROBOT_DYNAMICS_ROS_NO_NUMBA"
    try:
        import numba  # noqa: F401
    except Exception as exc:  # noqa: BLE001 -- ImportError, or a broken install (llvmlite)
        return f"numba is not importable ({type(exc).__name__}: {exc})"
    return None


def warn_once(message: str, seen: set | None = None) -> None:
    """Issue ``message`` as a :class:`CompilationWarning`, once per process (per ``seen``)."""
    seen = _WARNED if seen is None else seen
    with _LOCK:
        if message in seen:
            return
        seen.add(message)
    warnings.warn(message, CompilationWarning, stacklevel=4)


def module_text(header: str, constants: dict, functions) -> str:
    """Return a module's text: ``header``, ``NAME = value`` lines, then the functions' sources."""
    lines = [header, ""] + [f"{name} = {value!r}" for name, value in constants.items()]
    return "\n".join(lines) + "\n\n\n" + "\n\n".join(
        inspect.getsource(f) for f in functions)


def module_path(text: str, prefix: str, kind: str = "kernels") -> Path:
    """Return where the module holding ``text`` lives in the cache directory of ``kind``."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
    return cache_directory(kind) / f"{prefix}_{digest}.py"


def module_file(text: str, prefix: str, kind: str = "kernels") -> Path | None:
    """Return the module file holding ``text`` (written whole if absent), or None if impossible."""
    path = module_path(text, prefix, kind)
    try:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_atomically(path, text)
    except OSError:
        return None


def _load(text: str, prefix: str, path: Path | None) -> types.ModuleType:
    """Execute ``text`` as a module registered under a name of its hash (numba needs both)."""
    name = f"robot_dynamics_ros_{prefix}_" + hashlib.sha256(text.encode()).hexdigest()[:24]
    if path is None:
        name += "_in_memory"
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        module.__file__ = str(path) if path else f"<{name}>"
        exec(compile(text, module.__file__, "exec"), module.__dict__)
        module = sys.modules.setdefault(name, module)
    return module


def _njit_all(module: types.ModuleType, functions: dict, cache: bool) -> None:
    import numba
    with warnings.catch_warnings():
        # (numba warns instead of raising when the cache directory is not writable)
        warnings.simplefilter("ignore", numba.NumbaWarning)
        for name, signature in functions.items():   # callees first: numba reads them from
            function = getattr(module, name)          # the module's globals
            if isinstance(function, numba.core.dispatcher.Dispatcher):
                continue
            if signature == INLINE:
                jit = numba.njit(cache=cache, error_model="numpy", inline="always")
            elif signature is None:
                jit = numba.njit(cache=cache, error_model="numpy")
            else:
                jit = numba.njit(signature, cache=cache, error_model="numpy")
            setattr(module, name, jit(function))


def compile_module(text: str, prefix: str, functions: dict) -> tuple[types.ModuleType | None,
                                                                     str]:
    """
    Return (the module of ``text`` with ``functions`` compiled, what happened).

    ``functions`` maps names to numba signatures, in dependency order (callees first); a function
    with a signature is compiled (or loaded from the cache) here, one without (None) when the first
    compiled caller needs it, and one marked ``INLINE`` is inlined into its callers (numba's IR
    inlining: small helpers that LLVM would otherwise call). The module is None (and the string
    says why) when numba is unavailable or fails.
    """
    reason = numba_unavailable()
    if reason is not None:
        return None, reason
    import numba
    path = module_file(text, prefix)
    try:
        module = _load(text, prefix, path)
        _njit_all(module, functions, cache=path is not None)
    except Exception as exc:  # noqa: BLE001 -- any failure of numba: run as Python instead
        return None, (f"numba could not compile {prefix} "
                      f"({type(exc).__name__}: {str(exc).strip().splitlines()[0]})")
    where = f"cached in {path.parent}" if path else "not cached (directory not writable)"
    return module, f"compiled with numba {numba.__version__}, {where}"
