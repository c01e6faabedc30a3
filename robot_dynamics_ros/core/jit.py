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

**Ahead of time** (:func:`build_ahead`, :func:`load_ahead`): the same module text compiled by
``numba.pycc`` into a CPython extension in the same directory, named by a hash of the text, the
Python version, the installed numba and the CPU (the host's instruction set: ``/proc/cpuinfo``).
Why: a fresh process that loads the kernels through numba pays for numba's import and its
compiler target's set-up (1.1-1.5 s quiet, 3-5 s at load 4) before the first cached kernel, and
an extension imports in about a millisecond without numba (measured 0.6 ms, 2026-11-29).  The
extension exports the functions that have a signature (the entry points), each forwarding to the
function compiled as ``numba.njit`` compiles it; its wrappers convert arrays as numba's
machine-code entries do, without checking dtype or dimensions (callers pass float64 arrays of the
signature's dimensions: ``route.py``).  ``robot-dynamics compile`` builds it (``precompile.py``)
after the numba route's cache, which stays the fallback: where the extension is missing, stale
(another text, numba, Python or CPU) or cannot be loaded, :func:`load_ahead` returns None with no
error and the process takes numba's route as before.  To find the extension without hashing the
text (0.2 s of ``inspect.getsource``), an index in the directory maps a fingerprint of the text's
source files (their paths, sizes and time stamps, as numba's own cache keys) to the extension
built from them.  ``numba.pycc`` is deprecated upstream (numba 0.68.1, pinned, still has it);
if it goes, :func:`build_ahead` reports why it cannot build and the numba route serves.

**Shipped in a wheel** (:func:`ship`): pip runs no code where it installs a wheel, so setup.py's
``build_py`` builds the same extensions into the package (``shipped/`` beside this file) for
LLVM's generic model of the architecture (a wheel may run on another CPU than the builder's),
indexed by the contents' hashes of their source files (an installer writes new time stamps).
:func:`load_ahead`'s cheap probe takes the cache's host-tuned extension first, else the shipped
one where the installed files are the ones it was built from.  The generic build's forward
dynamics is 1.2-1.4x slower than the host's, its rnea and mass matrix within 6 %
(``bench/bench_first_contact.py``, 2026-11-29: doc/getting_started.md).

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
import importlib.machinery
import importlib.util
import inspect
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import types
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, NamedTuple

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


# --- ahead of time: the same module as an extension (numba.pycc), loaded without numba ---------

# (how an extension is built, part of its name: a change to _compile_extension builds anew)
_BUILD = "numba.pycc, exported functions forwarding to numba.njit's, {cpu} CPU"
# Where a wheel's build puts the extensions it ships (:func:`ship`), beside this file in the
# installed package, with their index (``index.json``: per spec, the extension's name and the
# contents' hashes of the source files it was built from).
SHIPPED = Path(__file__).resolve().with_name("shipped")
_SHIPPED_INDEX = "index.json"


class Spec(NamedTuple):
    """
    A compiled module, as ahead-of-time compilation needs it.

    ``where`` the module whose ``spec()`` returns it (a build runs in a fresh process),
    ``source()`` its text (``module_text``), ``functions`` as for :func:`compile_module` (those
    with a signature are exported), ``files`` the source files the text is made from (the
    index's fingerprint), ``options`` further ``numba.njit`` options (``nogil``).
    """

    where: str
    prefix: str
    source: Callable[[], str]
    functions: dict
    files: tuple
    options: dict = {}


def exported(spec: Spec) -> list:
    """Return the names of ``spec``'s functions an extension exports (those with a signature)."""
    return [name for name, signature in spec.functions.items()
            if signature not in (None, INLINE, INTRINSIC)]


def _cpu() -> str:
    """Return what identifies this CPU's instruction set, without numba (the extension's key)."""
    wanted = ("model name", "flags", "cpu family", "model")
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            lines = [line for line in f.read().split("\n\n")[0].splitlines()
                     if line.split(":")[0].strip() in wanted]
    except OSError:
        lines = [platform.processor()]
    return platform.machine() + "\n" + "\n".join(lines)


def _numba_stamp() -> str:
    """
    Return the installed numba's location and file stamp (found on ``sys.path``, not imported).

    Why not ``importlib.util.find_spec``: that asks the import system's finders, as an import
    does; a process that loads the extension has no business with numba's import at all.
    """
    for entry in sys.path:
        origin = os.path.join(entry or os.getcwd(), "numba", "__init__.py")
        try:
            stat = os.stat(origin)
        except OSError:
            continue
        return f"{origin} {stat.st_mtime_ns} {stat.st_size}"
    return "numba: none"


def _platform() -> str:
    """Return the key of an extension besides its text: Python, numba, CPU."""
    return "\n".join((sys.version, importlib.machinery.EXTENSION_SUFFIXES[0], _numba_stamp(),
                      _cpu()))


def _fingerprint(spec: Spec) -> str:
    """Return a cheap key of ``spec``'s text: its files' stamps (as numba's own cache keys)."""
    parts = [_platform()]
    for name in spec.files:
        stat = os.stat(name)
        parts.append(f"{name} {stat.st_mtime_ns} {stat.st_size}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def ahead_name(spec: Spec, text: str) -> str:
    """Return the extension's module name: a hash of its text and :func:`_platform`."""
    key = _digest(text + "\n" + _platform() + "\n" + _BUILD.format(cpu="host"))
    return f"robot_dynamics_ros_{spec.prefix}_aot_{key}"


def shipped_name(spec: Spec, text: str) -> str:
    """Return the name of the extension :func:`ship` builds: a hash of its text and build."""
    key = _digest(text + "\n" + _BUILD.format(cpu="generic"))
    return f"robot_dynamics_ros_{spec.prefix}_shipped_{key}"


def _index_path(spec: Spec) -> Path:
    return cache_directory() / f"{spec.prefix}_aot_index.json"


def _read_index(spec: Spec) -> dict:
    return _read_json(_index_path(spec))


def _read_json(path: Path) -> dict:
    """Return the JSON object in ``path``, or {} where it is missing, unreadable or no object."""
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return index if isinstance(index, dict) else {}


def _remember(spec: Spec, name: str, fingerprint: str | None = None) -> None:
    """Record that the files of ``spec`` (as ``fingerprint`` saw them) make extension ``name``."""
    index = _read_index(spec)
    index[fingerprint or _fingerprint(spec)] = name
    try:
        write_atomically(_index_path(spec), json.dumps(index, indent=0, sort_keys=True))
    except OSError:
        pass        # (the next process hashes the text instead: 0.2 s, still no numba)


def _import_extension(spec: Spec, name: str, directory: Path | None = None):
    """Return the extension ``name`` from ``directory`` (the cache's), or None if unusable."""
    path = (directory or cache_directory()) / (name + importlib.machinery.EXTENSION_SUFFIXES[0])
    if not path.is_file():
        return None
    module = sys.modules.get(name)
    if module is None:
        try:
            found = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(found)
            found.loader.exec_module(module)
        except Exception:  # noqa: BLE001 -- a broken or foreign file: today's route instead
            return None
    if not all(hasattr(module, f) for f in exported(spec)):
        return None
    module.__robot_dynamics_ros_ahead__ = str(path)
    return sys.modules.setdefault(name, module)


def load_ahead(spec: Spec, text: str | None = None):
    """
    Return ``spec``'s ahead-of-time extension (its exported functions), or None.

    Without ``text``, the cheap probe (no numba, no text: a few milliseconds): the index of the
    cache directory maps the fingerprint of ``spec.files`` to the extension built from them.
    With ``text`` (its files changed since, e.g. a checkout), the extension of that text if one
    was built, then indexed.  None, silently, where none is found or it cannot be loaded: the
    caller takes the numba route.
    """
    if os.environ.get("ROBOT_DYNAMICS_ROS_NO_NUMBA"):
        return None
    try:
        name = _read_index(spec).get(_fingerprint(spec)) if text is None else \
            ahead_name(spec, text)
    except OSError:
        return None
    module = _import_extension(spec, name) if isinstance(name, str) else None
    if module is not None and text is not None:
        _remember(spec, name)
    if module is None and text is None:
        module = _load_shipped(spec)
    return module


def _file_digests(files) -> dict | None:
    """Return the sha256 of each of ``files`` by its path in the package, or None if unreadable."""
    package = Path(__file__).resolve().parents[1]
    try:
        return {Path(f).resolve().relative_to(package).as_posix():
                hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in files}
    except (OSError, ValueError):
        return None


def _load_shipped(spec: Spec):
    """
    Return the extension a wheel's build shipped for ``spec`` (:func:`ship`), or None.

    Only if it was built from the very files installed beside it (their contents' hashes, not
    their time stamps: an installer writes new ones): a file edited since is not this text.
    """
    entry = _read_json(SHIPPED / _SHIPPED_INDEX).get(spec.prefix)
    try:
        if entry["files"] != _file_digests(spec.files):
            return None
        return _import_extension(spec, entry["name"], SHIPPED)
    except (KeyError, TypeError):       # (no entry, or not one ship() wrote)
        return None


def is_ahead(module) -> bool:
    """Return whether ``module`` is an ahead-of-time extension (:func:`load_ahead`)."""
    return hasattr(module, "__robot_dynamics_ros_ahead__")


@contextmanager
def _pycc_flags(options: dict):
    """Let numba.pycc's wrappers release the GIL where ``nogil`` says (pycc has no option)."""
    from numba.core.compiler import Flags
    from numba.pycc import compiler

    class _Flags(Flags):
        __slots__ = ()

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.release_gil = bool(options.get("nogil"))
    saved = compiler.Flags
    compiler.Flags = _Flags
    try:
        yield
    finally:
        compiler.Flags = saved


def build_ahead(spec: Spec) -> tuple[Path | None, str]:
    """
    Build ``spec``'s extension into the cache directory unless there; return (path, what happened).

    The path is None (and the string says why) where it cannot be built: numba or a C compiler
    missing, numba.pycc failing, the cache directory not writable.
    """
    reason = numba_unavailable()
    if reason is not None:
        return None, reason
    fingerprint = _fingerprint(spec)     # (before the text: a file changed meanwhile misses)
    text = spec.source()
    name = ahead_name(spec, text)
    path = cache_directory() / (name + importlib.machinery.EXTENSION_SUFFIXES[0])
    if _import_extension(spec, name) is not None:
        _remember(spec, name, fingerprint)
        return path, f"present: {path}"
    failed = _build_into(spec, text, path, "host")
    if failed:
        return None, failed
    _remember(spec, name, fingerprint)
    return path, f"built: {path}"


def ship(spec: Spec, directory: Path = SHIPPED) -> tuple[Path | None, str]:
    """
    Build ``spec``'s extension for any CPU of this architecture into ``directory``, indexed.

    For a wheel (setup.py's ``build_py`` runs it on the package it builds): a wheel runs no code
    when pip installs it, so the kernels it holds are all a fresh install has without
    ``robot-dynamics compile``.  Why not the host's CPU: a wheel may be installed on another
    machine than the one that built it (LLVM's generic model of the architecture instead).
    :func:`load_ahead` takes it where the cache holds no extension of this text.  Returns
    (path, what happened) as :func:`build_ahead` does.
    """
    reason = numba_unavailable()
    if reason is not None:
        return None, reason
    digests = _file_digests(spec.files)        # (before the text, as build_ahead's fingerprint)
    text = spec.source()
    name = shipped_name(spec, text)
    path = Path(directory) / (name + importlib.machinery.EXTENSION_SUFFIXES[0])
    failed = _build_into(spec, text, path, "generic")
    if failed:
        return None, failed
    index_path = Path(directory) / _SHIPPED_INDEX
    index = _read_json(index_path)
    index[spec.prefix] = {"name": name, "files": digests}
    write_atomically(index_path, json.dumps(index, indent=1, sort_keys=True))
    index_path.chmod(0o644)     # (read by every user of an installed package; mkstemp's is 0600)
    return path, f"built: {path}"


def _build_into(spec: Spec, text: str, path: Path, cpu: str) -> str | None:
    """Build the extension of ``text`` as the file ``path``, whole or not; None, or why not."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent, prefix=".build_") as scratch:
            _build_in_child(spec, path.name.split(".")[0], _digest(text), scratch, cpu)
            os.replace(Path(scratch) / path.name, path)
    except Exception as exc:  # noqa: BLE001 -- pycc, the C compiler, the disk: numba's route
        return (f"numba.pycc could not build {spec.prefix} "
                f"({type(exc).__name__}: {str(exc).strip().splitlines()[-1]})")
    return None


_CHILD = """
import importlib, sys
from robot_dynamics_ros.core import jit
spec = importlib.import_module({where!r}).spec()
text = spec.source()
if jit._digest(text) != {digest!r}:
    sys.exit("the kernels' text changed during the build")
jit._compile_extension(spec, text, {name!r}, {directory!r}, {cpu!r})
"""


def _build_in_child(spec: Spec, name: str, digest: str, directory: str, cpu: str) -> None:
    """
    Run :func:`_compile_extension` in a fresh process (this one's ``sys.path``).

    Why: in a process that has already compiled or loaded the same texts with ``numba.njit``,
    pycc fails to type them (an intrinsic looked up on the wrong module); a fresh process also
    keeps pycc's patched flags (:func:`_pycc_flags`) out of this one.
    """
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    run = subprocess.run(
        [sys.executable, "-c", _CHILD.format(where=spec.where, name=name, digest=digest,
                                             directory=directory, cpu=cpu)],
        env=environment, capture_output=True, text=True, timeout=3600)
    if run.returncode != 0:
        raise RuntimeError((run.stderr or run.stdout or "no output").strip()[-2000:])


def _forwarding(dispatcher) -> types.FunctionType:
    """
    Return a function of the same arguments that calls ``dispatcher`` (what pycc exports).

    Why not the function itself: pycc types an exported function with flags of its own, under
    which some drivers' texts fail numba's typing (``ws, _, _ = scratch(...)``: "cannot unify");
    through the dispatcher each is compiled as ``numba.njit`` compiles it (``error_model``
    included), and the forwarding call is inlined by LLVM.
    """
    arguments = ", ".join(inspect.signature(dispatcher.py_func).parameters)
    namespace = {"_compiled": dispatcher}
    exec(f"def {dispatcher.__name__}({arguments}):\n    return _compiled({arguments})\n",
         namespace)
    return namespace[dispatcher.__name__]


def _compile_extension(spec: Spec, text: str, name: str, directory: str,
                       cpu: str = "host") -> None:
    """Compile the extension ``name`` of ``text`` into ``directory`` by numba.pycc for ``cpu``."""
    import llvmlite.binding
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (pycc's deprecation: the module docstring)
        from numba.pycc import CC
    module = _load(text, spec.prefix + "_aot", None)
    # (exported functions too are compiled lazily here: pycc compiles them once, below)
    _njit_all(module, {k: (None if v not in (INLINE, INTRINSIC) else v)
                       for k, v in spec.functions.items()}, False, dict(spec.options))
    cc = CC(name, module)
    cc.output_dir = directory
    if cpu == "host":       # (else pycc's default: LLVM's generic model of the architecture)
        cc.target_cpu = llvmlite.binding.get_host_cpu_name()
    for function in exported(spec):
        cc.export(function, spec.functions[function])(_forwarding(getattr(module, function)))
    with _pycc_flags(spec.options), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cc.compile()
