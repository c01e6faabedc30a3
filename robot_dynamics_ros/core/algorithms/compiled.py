"""
The core's algorithms compiled by numba: the same texts, in machine code.

``kernels()`` returns a module whose functions are ``kernels.py``'s drivers and the recursions
they call (``newton_euler.forward_pass``, ``backward_pass``, ...), compiled once per process and
cached on disk across processes (``core/jit.py``), or None when numba is unavailable (a warning,
once): the algorithms then run as plain Python, on floats for one configuration and on numpy
columns for a batch.  Why: a single call in machine code costs about a microsecond, against 25-40
us for the same recursion in CPython (some 25 ns per float operation), and a batch costs the
arithmetic alone.

The drivers take the model as arrays, the same for every robot, so one compilation serves all
models: ``constants(model, form)`` is the model's rows of constants (``newton_euler.joint_rows``)
with cos and sin of each theta0 appended, and a last row with the gravity, base and flange.
``route.bound(model)`` are the model's functions on arrays: the compiled kernels where the
arguments are float arrays of the model's shapes (the kernels check shapes, order and finiteness
themselves), the checked path otherwise.

What is left of a call besides the arithmetic is its toll in Python and numba, as large as
Pinocchio's whole call of the same function (Puma 560 gravity torques, 2026-11-26: 0.7 us
Pinocchio, 0.9 us ours before this was measured).  Where it went and what ``route.bound`` does
about it: numba's dispatch (typing each argument, choosing the signature, 0.16 us), skipped by
calling the kernels' machine-code entries (``entry``) where one array of joint values comes in;
the reference counts of the drivers' array views (0.15 us) and an allocation of their
workspace, removed in ``kernels.py``; shapes of a batch's output built by slicing (0.1 us).
Measured in ``bench/bench_kernel.py`` (doc/benchmarks.md): a batch of one costs at most about
0.8 of Pinocchio's loop of one row for every function.
"""
from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from time import perf_counter

import numpy as np

from .. import jit
from ..errors import SingularityError
from ..model.bodies import gravity_in_base
from ..model.cache import model_constant
from ..transforms import exact_cos_sin
from . import aba as _aba
from . import crba as _crba
from . import kernels as _kernels
from . import newton_euler as _ne
from . import spatial_inertia as _si
from . import stick_slip as _ss

_HEADER = '''"""
The dynamics kernels of robot_dynamics_ros (core/algorithms/compiled.py), compiled by numba.

Do not edit: generated from the package's functions; the file name is a hash of this text.
"""
import math

import numpy as np
'''
_F1, _F2, _F3 = "float64[::1]", "float64[:, ::1]", "float64[:, :, ::1]"
INLINE = jit.INLINE


def _functions() -> tuple:
    """
    Return the compiled functions, callees first, with the signatures of the entry points.

    Helpers are inlined into their callers (``INLINE``): as separate functions their calls,
    several per link, cost more than their arithmetic.
    """
    return (
        (jit.unmanaged, jit.INTRINSIC), (jit.stack_array, jit.INTRINSIC),
        (_si.to_child, INLINE), (_si.motion_to_child, INLINE), (_si.angular_velocity, INLINE),
        (_si.joint_velocity, INLINE),
        (_ne.forward_pass, None), (_ne._online, INLINE), (_ne._rotational, INLINE),
        (_ne._plain_terms, INLINE), (_ne.backward_pass, None),
        (_si.rotate_symmetric_z, INLINE), (_si.rotate_general_z, INLINE),
        (_si.rotate_symmetric_x, INLINE), (_si.rotate_general_x, INLINE), (_si.shift, INLINE),
        (_si.to_parent, INLINE), (_si.force_to_parent, INLINE), (_si.rigid_to_parent, INLINE),
        (_aba._link_inertia, INLINE), (_aba.velocities, None), (_aba._joint, INLINE),
        (_aba._articulated, INLINE),
        (_aba.inertias, None), (_aba.accelerations, None),
        (_crba.composite_inertias, None), (_crba.mass_matrix_entries, None),
        (_kernels.all_finite, INLINE), (_kernels.all_finite_rows, INLINE),
        (_kernels.valid_row, INLINE), (_kernels.c_order_rows, INLINE),
        (_kernels.valid_rows, INLINE), (_kernels.valid, INLINE), (_kernels.valid_batch, INLINE),
        (_kernels.scratch, INLINE),
        (_kernels.joint_trig, None), (_kernels.newton_euler_into, None),
        (_kernels.rnea_one, f"boolean({_F2}, {_F1}, {_F1}, {_F1}, {_F1})"),
        (_kernels.gravity_one, f"boolean({_F2}, {_F1}, {_F1})"),
        (_kernels.rnea_general, f"boolean({_F2}, {_F1}, {_F2}, {_F2}, {_F2}, {_F2}, {_F2})"),
        (_kernels.rnea_many, f"boolean({_F2}, {_F2}, {_F2}, {_F2}, {_F2})"),
        (_kernels.gravity_many, f"boolean({_F2}, {_F2}, {_F2})"),
        (_kernels.mass_one, f"boolean({_F2}, {_F1}, {_F2})"),
        (_kernels.mass_many, f"boolean({_F2}, {_F2}, {_F3})"),
        (_kernels._aba_into, None),
        (_kernels.aba_one, f"int64({_F2}, {_F1}, {_F1}, {_F1}, {_F1})"),
        (_kernels.aba_general, f"int64({_F2}, {_F1}, {_F2}, {_F2}, {_F2}, {_F2}, {_F2})"),
        (_kernels.aba_many, f"int64({_F2}, {_F2}, {_F2}, {_F2}, {_F2})"),
        (_kernels.tool_jacobian_into, None),
        (_kernels.jacobian_one, f"boolean({_F2}, {_F1}, {_F2})"),
        (_kernels.jacobian_many, f"boolean({_F2}, {_F2}, {_F3})"),
        (_ss._sign, INLINE), (_ss.solve_subset, None), (_ss.coulomb_velocity, None),
        (_ss._active_set, None), (_ss._descent, None), (_ss.friction_step, None),
        (_kernels._aba_stage, INLINE), (_kernels.rk4_into, None), (_kernels.valid_step, INLINE),
        (_kernels.mass_into, INLINE),
        (_kernels.rk4_one, f"int64({_F2}, {_F2}, float64, {_F1}, {_F2})"),
        (_kernels.coulomb_step_into, None),
        (_kernels.rk4_coulomb_one, f"int64({_F2}, {_F2}, float64, {_F1}, {_F1}, boolean[::1], "
                                   f"float64, {_F2})"),
        (_kernels.step_into, None), (_kernels.stop_at_limits, INLINE),
        (_kernels.simulate_steps, f"int64({_F2}, {_F2}, boolean[::1], int64[:, ::1], "
                                  f"int64[:, ::1], {_F1}, {_F3}, float64, float64, int64, int64, "
                                  "int64)"),
    )


_LOCK = threading.Lock()
_STATE: dict = {}
# Seconds of plain-Python dynamics a process runs before it loads the kernels (route.py's
# docstring: why, and the figures).
PLAIN_BUDGET = 0.5
_PLAIN_SPENT = [0.0]    # seconds the plain route has spent so far in this process
_kernels_unset = False          # (a falsy default: look the module up once it is built)


def _constants() -> dict:
    """Return the numeric constants the compiled texts read (column indices, tolerances)."""
    out = {}
    for module in (_ne, _aba, _crba, _kernels, _ss):
        out.update({k: v for k, v in vars(module).items()
                    if k.isupper() and isinstance(v, (int, float)) and not isinstance(v, bool)})
    return out


def source() -> str:
    """Return the text of the compiled module (one namespace: every name must be unique)."""
    functions = [f for f, _ in _functions()]
    names = [f.__name__ for f in functions]
    if len(set(names)) != len(names):
        raise AssertionError(f"compiled functions with the same name: {sorted(names)}")
    # (how each function is compiled is part of the text: a change compiles anew)
    header = _HEADER + "".join(f"# {f.__name__}: {sig}\n" for f, sig in _functions())
    return jit.module_text(header, _constants(), functions)


def spec() -> jit.Spec:
    """Return the compiled module as ``jit``'s ahead-of-time functions need it."""
    functions = _functions()
    files = {f.__code__.co_filename for f, _ in functions} | {__file__, jit.__file__}
    return jit.Spec(__name__, "kernels", source, {f.__name__: sig for f, sig in functions},
                    tuple(sorted(files)))


def ahead():
    """
    Return the kernels compiled ahead of time (``jit.load_ahead``'s cheap probe), or None.

    Probed once per process; a few milliseconds, no numba import.
    """
    if "ahead" not in _STATE:
        _STATE["ahead"] = jit.load_ahead(spec())
    return _STATE["ahead"]


def kernels():
    """
    Return the compiled module (its functions named as in ``kernels.py``), or None.

    The extension compiled ahead of time where ``robot-dynamics compile`` built it for this
    text, Python, numba and CPU (``jit.load_ahead``: milliseconds, numba not imported); else
    built by numba (or loaded from its disk cache) at the first call in a process; None, with a
    ``jit.CompilationWarning`` once, when numba is unavailable or fails.  The extension holds
    the entry points (the functions with a signature) only; :func:`jit_kernels` all of them.
    """
    try:
        return _STATE["module"]
    except KeyError:
        pass
    with _LOCK:
        if "module" not in _STATE:
            text = source() if ahead() is None else None
            module = ahead() or jit.load_ahead(spec(), text)
            if module is not None:
                _STATE["module"], _STATE["reason"] = module, (
                    "compiled ahead of time by numba.pycc, loaded from "
                    f"{module.__robot_dynamics_ros_ahead__}")
            else:
                _STATE["module"], _STATE["reason"] = _jit(text)
    return _STATE["module"]


def _jit(text: str | None = None) -> tuple:
    """Return (the kernels built by numba, or None, what happened), once per process."""
    if "jit" not in _STATE:
        module, reason = jit.compile_module(
            text or source(), "kernels", {f.__name__: sig for f, sig in _functions()})
        if module is None:
            jit.warn_once(f"the dynamics kernels run as plain Python: {reason}")
        _STATE["jit"] = module, reason
    return _STATE["jit"]


def jit_kernels():
    """Return the kernels built by numba (every function, not only the entry points), or None."""
    with _LOCK:
        return _jit()[0]


def jit_status() -> str:
    """Return how :func:`jit_kernels` run ("compiled with numba ...", or why not)."""
    with _LOCK:
        return _jit()[1]


def loaded() -> bool:
    """Return whether this process has built or loaded the kernels (or found it cannot)."""
    return "module" in _STATE


def due():
    """
    Return the kernels (:func:`kernels`) if a call should take them now, else None (plain).

    The one decision of the route (``route.py``'s docstring says why): the kernels where they
    were compiled ahead of time (:func:`ahead`: loading them costs milliseconds), once this
    process has loaded them, has imported numba for something else (the scaling's passes: then
    most of the price is paid and the kernels cost some 10 ms each) or its plain route has spent
    :data:`PLAIN_BUDGET`; until then None, and the caller runs the plain texts inside
    :func:`charged`.
    """
    if ("module" in _STATE or _PLAIN_SPENT[0] >= PLAIN_BUDGET or _numba_imported()
            or ahead() is not None):
        return kernels()
    return None


def _numba_imported() -> bool:
    """Return whether this process has imported numba (for :func:`due`)."""
    return "numba" in sys.modules


@contextmanager
def charged():
    """Count the time spent inside towards :data:`PLAIN_BUDGET` (a plain call of :func:`due`)."""
    start = perf_counter()
    try:
        yield
    finally:
        _PLAIN_SPENT[0] += perf_counter() - start


def status() -> str:
    """Return how the kernels run ("compiled with numba ...", or why not)."""
    kernels()
    return _STATE["reason"]


def _build_constants(model, form: str) -> np.ndarray:
    rows = [row + exact_cos_sin(row[_ne.THETA0]) for row in _ne.joint_rows(model, form)]
    ch = model.chain
    last = (tuple(gravity_in_base(model)) + tuple(ch.base[:3, :3].ravel())
            + tuple(ch.base[:3, 3]) + tuple(ch.flange[:3, :3].ravel()) + tuple(ch.flange[:3, 3]))
    last += (0.0,) * (len(rows[0]) - len(last))
    return np.ascontiguousarray(rows + [last], dtype=float)


def constants(model, form: str = "plain") -> np.ndarray:
    """
    Return the model's constants for the kernels, (n + 1, N_CONSTANTS + 2); once per model.

    Row i < n: joint i's row of ``newton_euler.joint_rows`` in ``form`` (model/bodies.FORMS;
    the ABA, CRBA and Jacobian read "plain" rows, the Newton-Euler ``bodies.numeric_form``),
    then cos and sin
    of theta0; row n: the model's gravity in frame 0 (3), the base pose (rotation by rows, 9;
    position, 3) and the flange (internal frame n -> tool: 9 and 3), then zeros.
    """
    return model_constant(model, ("kernel_constants", form),
                          lambda m: _build_constants(m, form))


def entry(dispatcher):
    """
    Return the machine code's entry of a kernel of one signature, or the dispatcher itself.

    The entry skips numba's dispatch (the type of each argument, the choice of the signature),
    0.16 us of a 0.9 us batch of one (Puma 560 gravity torques, 2026-11-26).  It converts an
    array argument without checking its dtype, dimensions or order, so its callers here pass
    float64 arrays (``dtype is FLOAT64``) of the signature's dimensions and the kernels check
    the strides (``kernels.valid_row``, ``valid_rows``); so do ``route.py``'s callers of rnea
    and the ABA for all three of their arrays.  The ahead-of-time extension's functions
    (:func:`ahead`) convert their arguments the same way: they are returned as they are.
    """
    try:
        (result,) = dispatcher.overloads.values()
        return result.entry_point
    except (AttributeError, ValueError):     # (not numba's usual dispatcher: it checks itself)
        return dispatcher


def kernel_array(value) -> np.ndarray:
    """Convert a value to a writable C-contiguous float array (2-D at least) for a kernel."""
    a = np.ascontiguousarray(np.atleast_2d(value), dtype=float)
    return a if a.flags.writeable else a.copy()


def singular(model) -> SingularityError:
    """Return the error of a singular mass matrix (forward dynamics undefined)."""
    return SingularityError(f"mass matrix of '{model.name}' is singular at this q (a joint "
                            "moves no mass or inertia, e.g. massless outer links): forward "
                            "dynamics is undefined")
