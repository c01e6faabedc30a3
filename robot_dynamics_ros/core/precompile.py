"""
Every numba kernel of the core, compiled (or loaded from the disk cache) ahead of a user's call.

Numba compiles a kernel the first time a process needs it (seconds to tens of seconds on a busy
2-core machine) and caches the machine code on disk (``core/jit.py``: one directory per machine
user, keyed by the kernels' text, numba's version, the Python version and the CPU), so a later
process only loads it (milliseconds).  :func:`compile_all` runs every kernel once so that the
cache holds them before a user's first call: ``robot-dynamics compile`` calls it, and
tools/setup_venv.sh runs that at the end of the set-up; the managed nodes call
:func:`warm_up` in ``on_configure`` (loads, or compiles where nothing was cached).

:func:`ship` builds the extensions a wheel holds (setup.py's ``build_py``: ``pip install`` runs
no code where it installs, so a wheel's kernels are compiled when it is built).

:data:`KERNELS` is the one list of them: a new compiled kernel joins it with one line (its name,
its file, a function that compiles or loads it and returns how it runs).  Each loader goes
through the public route where one exists, so whatever the route compiles is compiled.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, NamedTuple

import numpy as np


class Kernel(NamedTuple):
    """One compiled kernel: what it is, where its text is, and how to compile or load it."""

    name: str
    where: str                      # the module that holds its text
    load: Callable[[], str | tuple]     # compiles or loads it; returns how it runs (and
    #                                     how many compilations it ran in other processes)


class Loaded(NamedTuple):
    """What :func:`compile_all` did for one kernel."""

    kernel: Kernel
    status: str                     # "compiled with numba ..., cached in ...", or why not
    seconds: float
    compilations: int               # numba compilations it took (0: loaded from the cache);
    #                                 an extension built ahead of time counts as one


def _dynamics() -> str:
    # numba's route (the fallback of the extensions below): into numba's disk cache
    from .algorithms import compiled
    compiled.jit_kernels()
    return compiled.jit_status()


def _passes() -> str:
    from .trajectories.topp import passes
    return "compiled" if passes.compiled() is not None else \
        "not compiled (numba unavailable: the numpy passes run)"


def _simulation() -> str:
    # the public call: whatever the simulator compiles (one RK4 step with friction, moving
    # and held) is compiled here
    from .model import RobotModel
    from .simulation import simulate
    model = RobotModel.named("planar2")
    result = simulate(model, np.zeros(model.n), np.zeros(model.n), 0.003)
    return f"{len(result.t)} steps of '{model.name}'"


def _ahead() -> tuple[str, int]:
    # the modules above as extensions, loaded without numba (core/jit.py: ahead of time); the
    # builds run in child processes, whose compilations are counted as one per extension built
    from . import jit
    done, built = [], 0
    for spec in _ahead_specs():
        path, what = jit.build_ahead(spec)
        done.append(f"{spec.prefix} {what}" if path is not None else what)
        built += what.startswith("built")
    return "; ".join(done), built


def ship() -> list[str]:
    """
    Build the extensions a wheel ships into the package (``jit.ship``); return what happened.

    setup.py's ``build_py`` runs it on the package a wheel is built from (``pip install``: a wheel
    runs no code when installed), so that a fresh install loads the dynamics kernels and the
    scaling's passes without compiling anything.  A failure is reported, never raised: the
    installed package then compiles at first use, as without the extensions.
    """
    from . import jit
    return [f"{spec.prefix}: {jit.ship(spec)[1]}" for spec in _ahead_specs()]


def _ahead_specs() -> tuple:
    """Return the modules built ahead of time: the dynamics kernels and the scaling's passes."""
    from .algorithms import compiled
    from .trajectories.topp import passes
    return compiled.spec(), passes.spec()


KERNELS: tuple[Kernel, ...] = (
    Kernel("dynamics kernels (rnea, gravity, mass matrix, forward dynamics, Jacobian)",
           "core/algorithms/compiled.py", _dynamics),
    Kernel("time-optimal scaling passes", "core/trajectories/topp/passes.py", _passes),
    Kernel("simulator step", "core/simulation/", _simulation),
    Kernel("ahead-of-time extensions of the dynamics kernels and passes (numba.pycc)",
           "core/jit.py", _ahead),
)


@contextmanager
def counting_compilations():
    """
    Yield a list that receives one entry per numba compilation (not cache loads) meanwhile.

    Numba reports each compilation as a ``numba:compile`` event; a kernel loaded from the disk
    cache reports none.  Without numba the list stays empty.
    """
    found: list = []
    try:
        from numba.core import event
    except Exception:  # noqa: BLE001 -- no numba: nothing compiles
        yield found
        return

    class _Listener(event.Listener):
        def on_start(self, ev):
            found.append(getattr(ev.data.get("dispatcher"), "__name__", "?"))

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", _Listener()):
        yield found


def compile_all(kernels=KERNELS, report: Callable[[Loaded], None] | None = None) -> list:
    """Compile or load each of ``kernels``; return a :class:`Loaded` each (``report``'d too)."""
    done = []
    for kernel in kernels:
        started = time.perf_counter()
        with counting_compilations() as compilations:
            status = kernel.load()
        status, elsewhere = status if isinstance(status, tuple) else (status, 0)
        loaded = Loaded(kernel, status, time.perf_counter() - started,
                        len(compilations) + elsewhere)
        done.append(loaded)
        if report is not None:
            report(loaded)
    return done


def warm_up(model) -> None:
    """
    Load the dynamics kernels and run each public function once on ``model``.

    For a node's ``on_configure``: after it, the first call on ``model`` costs what every later
    call costs (the kernels loaded, the model's constants built).
    """
    from .algorithms import compiled, forward_dynamics, gravity_torques, jacobian, mass_matrix
    from .algorithms import rnea
    compiled.kernels()      # (loaded now: the route takes them from here on, not plain first)
    q = np.clip(np.zeros(model.n), model.lower, model.upper)
    zero = np.zeros(model.n)
    for batch in (q, q[None, :]):
        rnea(model, batch, zero if batch.ndim == 1 else zero[None, :],
             zero if batch.ndim == 1 else zero[None, :])
        gravity_torques(model, batch)
        mass_matrix(model, batch)
    forward_dynamics(model, q, zero, zero)
    jacobian(model, q)
