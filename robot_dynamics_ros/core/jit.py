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
disk cache.  (One module holds every kernel, the simulator's steps included:
``core/algorithms/compiled.py``.)  Numba's ``error_model="numpy"``: a
division by zero gives inf/NaN, never an exception (the callers check their results where it
matters).

Two numba intrinsics (compiled as such: ``INTRINSIC``) let the drivers use arrays numba does not
reference-count: :func:`unmanaged` (a view of an argument, which the caller keeps alive) and
:func:`stack_array` (scratch on the driver's stack).  Why: every row view of a counted array
(``c[i]``, ``q[k]``) costs an atomic increment and decrement of its counter; in a batch of one
these were about 100 atomic operations, 16 % of a Puma 560 gravity call (perf, 2026-11-26), and
its batch rows took 0.31 us each against 0.21 without them (timed in turns at load 4.5;
``bench/bench_kernel.py`` at load 3: 0.34-0.44 against 0.26-0.27).
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
INTRINSIC = "intrinsic"
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


def unmanaged(typingctx, array):
    """
    (Numba intrinsic, ``INTRINSIC``) Return ``array`` as a view numba does not reference-count.

    The view has no memory-info pointer (as a ``numba.carray`` of a raw pointer has none), so
    neither it nor its slices touch the counter.  Only for memory that outlives every use of
    the view: a compiled function's arguments (its caller holds them) and :func:`stack_array`
    in the function that allocated it.  Never return such a view to Python.
    """
    from numba.core import cgutils, types as numba_types

    if not isinstance(array, numba_types.Array):
        return None

    def codegen(context, builder, signature, args):
        proxy = cgutils.create_struct_proxy(signature.return_type)
        view = proxy(context, builder, value=args[0])
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()
    return array(array), codegen


def stack_array(typingctx, rows, columns):
    """
    (Numba intrinsic, ``INTRINSIC``) Return an uninitialised float64 array (rows, columns).

    On the stack of the compiled function whose text calls it (after numba's inlining: call it
    from a driver or an ``INLINE`` helper, never from a function compiled apart, whose stack is
    gone when it returns), freed when that function returns, not reference-counted.  Bounded
    by the caller (a few tens of KB: threads' stacks can be small).
    """
    from numba.core import types as numba_types
    from numba.np.arrayobj import make_array, populate_array

    if not (isinstance(rows, numba_types.Integer) and isinstance(columns, numba_types.Integer)):
        return None
    result = numba_types.Array(numba_types.float64, 2, "C")

    def codegen(context, builder, signature, args):
        intp = context.get_value_type(numba_types.intp)
        r, c = (context.cast(builder, a, t, numba_types.intp)
                for a, t in zip(args, signature.args))
        itemsize = intp(8)
        data = builder.alloca(context.get_value_type(numba_types.float64),
                              size=builder.mul(r, c))
        out = make_array(result)(context, builder)
        populate_array(out, data=data, shape=[r, c], strides=[builder.mul(c, itemsize), itemsize],
                       itemsize=itemsize, meminfo=None)
        return out._getvalue()
    return result(rows, columns), codegen


def _njit_all(module: types.ModuleType, functions: dict, cache: bool, options: dict) -> None:
    import numba
    with warnings.catch_warnings():
        # (numba warns instead of raising when the cache directory is not writable)
        warnings.simplefilter("ignore", numba.NumbaWarning)
        for name, signature in functions.items():   # callees first: numba reads them from
            function = getattr(module, name)          # the module's globals
            if not isinstance(function, types.FunctionType):    # (done: the module is loaded)
                continue
            if signature == INTRINSIC:
                setattr(module, name, numba.extending.intrinsic(function))
                continue
            if signature == INLINE:
                jit = numba.njit(cache=cache, error_model="numpy", inline="always", **options)
            elif signature is None:
                jit = numba.njit(cache=cache, error_model="numpy", **options)
            else:
                jit = numba.njit(signature, cache=cache, error_model="numpy", **options)
            setattr(module, name, jit(function))


def compile_module(text: str, prefix: str, functions: dict,
                   options: dict | None = None) -> tuple[types.ModuleType | None, str]:
    """
    Return (the module of ``text`` with ``functions`` compiled, what happened).

    ``functions`` maps names to numba signatures, in dependency order (callees first); a function
    with a signature is compiled (or loaded from the cache) here, one without (None) when the first
    compiled caller needs it, one marked ``INLINE`` is inlined into its callers (numba's IR
    inlining: small helpers that LLVM would otherwise call) and one marked ``INTRINSIC`` is a
    numba intrinsic (``numba.extending.intrinsic``: it writes LLVM IR).  ``options``: more
    ``numba.njit`` options for every function (e.g. ``nogil``; numba's cache does not key on
    them, so ``text`` must say them).  The module is None (and the string says why) when numba
    is unavailable or fails.
    """
    reason = numba_unavailable()
    if reason is not None:
        return None, reason
    import numba
    path = module_file(text, prefix)
    if path is None:
        warn_once(f"the compiled kernels cannot be cached: {cache_directory()} is not writable, "
                  f"so every process compiles them again (seconds); set "
                  f"{CACHE_ENVIRONMENT_VARIABLE} to a writable directory")
    try:
        module = _load(text, prefix, path)
        _njit_all(module, functions, path is not None, dict(options or {}))
    except Exception as exc:  # noqa: BLE001 -- any failure of numba: run as Python instead
        return None, (f"numba could not compile {prefix} "
                      f"({type(exc).__name__}: {str(exc).strip().splitlines()[0]})")
    where = f"cached in {path.parent}" if path else "not cached (directory not writable)"
    return module, f"compiled with numba {numba.__version__}, {where}"
