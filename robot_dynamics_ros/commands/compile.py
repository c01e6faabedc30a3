"""
robot-dynamics compile: compile every numba kernel of the package into the disk cache, once.

Run at install (tools/setup_venv.sh does, and ``colcon build`` through setup.py's install command;
a wheel from ``pip install`` holds the kernels built for any CPU, and this command adds the
host's), and again after the cache was wiped. Each kernel is compiled,
or loaded where the cache already holds it; the command says which, where the cache is and how long
it took. Last, it builds the dynamics kernels and the scaling's passes ahead of time as extensions
(``numba.pycc``, into the same directory; ``core/jit.py``), which a process loads without importing
numba, and says whether each was built, was there already, or why it cannot be built (numba's route
then serves). The managed nodes load the kernels in ``on_configure`` (``core.precompile.warm_up``),
so a node never compiles on its first message even without this command, but its configure step
then takes the compile time.
"""
from __future__ import annotations

import os
import sys
import time

HELP = ("compile (or load) every compiled kernel of the package into the disk cache, so that no "
        "user's first call compiles (run once after install)")


def add_arguments(parser):
    parser.add_argument("--quiet", action="store_true", help="print only the summary line")


def _cache_line() -> str:
    from ..core import jit
    directory = jit.cache_directory()
    writable = _writable(directory)
    chosen = "" if os.environ.get(jit.CACHE_ENVIRONMENT_VARIABLE) else \
        f" (set {jit.CACHE_ENVIRONMENT_VARIABLE} to choose another)"
    return (f"cache: {directory}{chosen}" if writable else
            f"cache: {directory} is NOT writable: every process will compile the kernels again "
            f"(set {jit.CACHE_ENVIRONMENT_VARIABLE} to a writable directory)")


def _writable(directory) -> bool:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


def kernels():
    """Return what this command compiles: the core's registry (``core.precompile.KERNELS``)."""
    from ..core.precompile import KERNELS
    return KERNELS


def run(args) -> int:
    from ..core.jit import numba_unavailable
    from ..core.precompile import compile_all
    started = time.perf_counter()
    reason = numba_unavailable()
    if reason is not None:
        print(f"robot-dynamics compile: nothing to compile: {reason}; the kernels run as plain "
              "Python (much slower)")
        return 0
    import numba
    print(f"robot-dynamics compile: numba {numba.__version__}, Python "
          f"{sys.version.split()[0]}; {_cache_line()}", flush=True)

    def report(loaded):
        if not args.quiet:
            how = (f"compiled ({loaded.compilations} numba compilations)" if loaded.compilations
                   else "loaded from the cache")
            print(f"  {loaded.kernel.name} [{loaded.kernel.where}]: {how} in "
                  f"{loaded.seconds:.1f} s; {loaded.status}", flush=True)

    done = compile_all(kernels(), report)
    compiled = sum(1 for d in done if d.compilations)
    print(f"robot-dynamics compile: {len(done)} kernels, {compiled} compiled, "
          f"{len(done) - compiled} loaded, in {time.perf_counter() - started:.1f} s")
    return 0
