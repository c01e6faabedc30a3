"""
The one route to a model's dynamics: the compiled kernels, chosen here, once per model.

Every caller of the core's dynamics (the public ``rnea``, ``gravity_torques``,
``nonlinear_effects``, ``mass_matrix``, ``forward_dynamics`` and ``jacobian``, the nodes, the
commands, bag processing, both scalings, the simulator, the observer, identification and the
task space) gets its functions from :func:`bound` (or :func:`select`, the same with a name for
the implementation): the kernels of ``compiled.py`` where numba works, the checked path of
``checked.py`` (plain Python, ``plain.py``) where it does not (``ROBOT_DYNAMICS_ROS_NO_NUMBA``,
or numba missing: one warning, from ``compiled.kernels``).  The kernels are generic over the
model (its constants are a data array), so a new robot compiles nothing.  The generated model of
``robot-dynamics codegen`` is an export, not a route: the compiled kernels are faster for every
function and batch size (``bench/bench_kernel.py``, doc/benchmarks.md).

Layers of this package, each importing only those below it: the algorithm texts
(``newton_euler.py``, ``crba.py``, ``aba.py``, ``spatial_inertia.py``, ``frames.py``,
``stick_slip.py``; the friction law ``core/control/friction.py`` beside them), the drivers and
the compiled module (``kernels.py``, ``compiled.py``, ``plain.py``), the checked paths
(``checked.py``), this route, then the public functions (``rnea.py``, ``mass.py``,
``forward_dynamics.py``, ``kinematics.py``, ...).  ``test/test_architecture.py`` checks it.

What is left of a call besides the arithmetic is its toll in Python and numba; the closures
below bind everything as local names and call the kernels' machine-code entries
(``compiled.entry``) where one array of joint values comes in (``compiled.py`` says why).

**A process's first dynamics: the kernels compiled ahead of time, else plain Python until the
kernels pay.**  Where ``robot-dynamics compile`` built the kernels' extension for this text,
Python, numba and CPU (``core/jit.py``, "Ahead of time"), a process loads it at its first
dynamics in milliseconds without importing numba, and every call takes it (``compiled.ahead``).
Without it (a stale or missing extension, no C compiler), loading the compiled kernels through
numba costs a fresh process a fixed toll even from a warm cache, whatever the job: importing
numba (0.46 s on a quiet 2-core EPYC, 0.29 s of it scipy.linalg, which numba imports to look
for a BLAS), then numba's first cache load initialises its CPU target (0.6-0.9 s, most of it
importing numba's implementations), then the kernels themselves (some 10 ms each): 1.1-1.5 s
quiet, 3-5 s at load 4 (profiled, 2026-11-29).  The plain-Python texts need none of it: a single
call costs 0.1-1.2 ms and a batch row 1.5-9 us (Puma 560, timed at load 5, the same day).  So
until this process has loaded the kernels (a node's ``on_configure`` does: ``precompile.
warm_up``; so does ``select(model, "compiled")``, the simulator and ``robot-dynamics
compile``) or imported numba for other work (the scaling's passes: most of the price is then
paid), "fastest" runs the plain route and counts the time it spends; once that reaches
:data:`compiled.PLAIN_BUDGET` the kernels are loaded and every later call takes them (the
decision: ``compiled.due``, which the checked paths below take too).  This is the
ski-rental rule (Karlin, Manasse, Rudolph and Sleator 1988, "Competitive snoopy caching"): pay
as you go until what was paid equals the price of buying, which never costs more than twice the
best choice made knowing the job's size in advance.  The budget here is below the price (0.5 s
against 1.1-1.5 s): a job just longer than it costs at most 1 + price / budget (3-4x) its best,
and a long job, the common case (bags, scalings, simulation), loads the kernels sooner.

The extension's functions and the machine-code entries convert their array arguments without
checking dtype or dimensions (a float32 array would be read as float64 past its end), so the
closures below pass them float64 arrays of the signature's dimensions only; the kernels check
shapes, order and finiteness, and anything else takes the checked path.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ..control.friction import adding_extra_friction, subtracting_extra_friction
from ..inputs import joint_arrays
from ..model.bodies import numeric_form
from ..model.cache import model_constant
from . import plain
from .checked import aba_checked, gravity_in_base, mass_checked, rnea_checked
from .coupled import adding_coupled_inertia, adding_coupling, coupled_forward
from .compiled import (PLAIN_BUDGET, charged, constants, due, entry, kernel_array, kernels,
                       singular, status)
from .frames import numpy_jacobian

IMPLEMENTATIONS = ("compiled", "plain")
PREFERENCES = ("fastest",) + IMPLEMENTATIONS
FLOAT64 = np.dtype(np.float64)
FIRST_REASON = (f"the compiled kernels are not loaded in this process yet: plain Python for the "
                f"first {PLAIN_BUDGET:g} s of dynamics, then the kernels (compiled.PLAIN_BUDGET)")


class Kernel(NamedTuple):
    """
    The dynamics functions of one model (immutable), as ``robot_dynamics_ros.core`` defines them.

    ``rnea(q, qd, qdd)``, ``gravity_torques(q)``, ``nonlinear_effects(q, qd)``,
    ``mass_matrix(q)``, ``forward_dynamics(q, qd, tau)`` and ``jacobian(q)`` (the tool frame's
    geometric Jacobian, world axes), single (n,) or batched (N, n), the model's gravity, no
    external wrench, rotors and the whole friction law included; arguments checked as the core
    checks them (InputError naming one).  ``implementation`` names what computes them
    ("compiled" or "plain"), ``reason`` why it is not the compiled kernels (empty if it is).
    """

    model: object
    implementation: str
    reason: str
    rnea: Callable
    gravity_torques: Callable
    nonlinear_effects: Callable
    mass_matrix: Callable
    forward_dynamics: Callable
    jacobian: Callable


_LAST: list = [None, None]      # the last model and its Kernel: most calls repeat the model


def bound(model) -> Kernel:
    """
    Return the model's :class:`Kernel` on the route (built once per model).

    The compiled kernels once this process has loaded them; until then, and while the plain
    route has spent less than ``compiled.PLAIN_BUDGET`` (``compiled.due``), a Kernel that
    runs plain Python and moves to the kernels by itself (the module docstring says why; its
    ``reason`` says so).
    """
    last = _LAST
    if last[0] is model:
        return last[1]
    if due() is None:
        return model_constant(model, "first_kernels", _first)
    return _compiled(model)


def select(model, prefer: str = "fastest") -> Kernel:
    """
    Return the dynamics of ``model``: :func:`bound` ("fastest"), "compiled" or "plain".

    "compiled" loads the kernels now (for work that must not pay for them on a later call: a
    node's ``on_configure``); "plain" is the plain-Python texts whether or not numba works (the
    reference the compiled kernels are tested against).  Raises ValueError for an unknown
    ``prefer``.
    """
    if prefer not in PREFERENCES:
        raise ValueError(f"unknown dynamics implementation {prefer!r} "
                         f"(available: {list(PREFERENCES)})")
    if prefer == "plain":
        return _plain(model)
    return _compiled(model) if prefer == "compiled" else bound(model)


def _compiled(model) -> Kernel:
    """Return the model's compiled :class:`Kernel` (the kernels loaded first if need be)."""
    functions = model_constant(model, "bound_kernels", _bind)
    _LAST[:] = model, functions     # (another thread may see either pair: both are consistent)
    return functions


def _first(model) -> Kernel:
    """Return the Kernel of a process's first dynamics: plain, timed, then compiled."""
    plain_kernel = _plain(model)

    def tier(index):
        def call(*args, _plain_call=plain_kernel[index], _due=due, _charged=charged):
            if _due() is not None:
                return _compiled(model)[index](*args)
            with _charged():
                return _plain_call(*args)
        return call
    first = Kernel._fields.index("rnea")
    return Kernel(model, "plain", FIRST_REASON,
                  *(tier(i) for i in range(first, len(Kernel._fields))))


def _kernel(model, implementation, reason, rnea, gravity, mass, forward, jacobian) -> Kernel:
    """
    Return the :class:`Kernel` of these functions, with the friction law's further terms.

    And a coupled model's rotor inertia and friction (``coupled.py``).
    """
    def gravity_of(_, q, _gravity=gravity):     # (the law's g(q): this kernel's)
        return _gravity(q)
    full = adding_coupling(model, adding_extra_friction(model, rnea, gravity_of))
    mass = adding_coupled_inertia(model, mass)
    forward = coupled_forward(model, subtracting_extra_friction(model, forward, gravity_of),
                              mass)
    return Kernel(model, implementation, reason, full, gravity,
                  lambda q, qd: full(q, qd, np.zeros(np.shape(q))), mass, forward, jacobian)


def _bind(model) -> Kernel:
    """Build the :class:`Kernel` of ``model``: closures with everything bound as local names."""
    slow = (lambda q, qd, qdd: rnea_checked(model, q, qd, qdd, None, None),
            lambda q: rnea_checked(model, q, None, None, None, None),
            lambda q: mass_checked(model, q),
            lambda q, qd, tau: aba_checked(model, q, qd, tau, None),
            lambda q: numpy_jacobian(model, q, None, None, "world"))
    m = kernels()
    if m is None:
        return _kernel(model, "plain", f"compiled kernels unavailable: {status()}", *slow)
    plain_rows, newton_euler = constants(model, "plain"), constants(model, numeric_form(model))
    return _kernel(
        model, "compiled", "",
        _vector(entry(m.rnea_one), entry(m.rnea_many), newton_euler, model.n, slow[0]),
        _positions(entry(m.gravity_one), entry(m.gravity_many), newton_euler, slow[1]),
        _matrix(entry(m.mass_one), entry(m.mass_many), plain_rows, (model.n, model.n),
                slow[2]),
        _accelerations(entry(m.aba_one), entry(m.aba_many), plain_rows, model, slow[3]),
        _matrix(entry(m.jacobian_one), entry(m.jacobian_many), plain_rows, (6, model.n),
                slow[4]))


def _plain(model) -> Kernel:
    """Return the core's algorithms as plain Python, whether or not numba is available."""
    def gravity():
        return kernel_array(gravity_in_base(model, None))[0]

    def rnea(q, qd, qdd):
        (q, qd, qdd), _ = joint_arrays(model, q=q, qd=qd, qdd=qdd)
        return plain.rnea(model, q, qd, qdd, gravity(), np.zeros((1, 6)))

    def mass_matrix(q):
        (q,), _ = joint_arrays(model, q=q)
        return plain.mass_matrix(model, q)

    def forward_dynamics(q, qd, tau):
        (q, qd, tau), _ = joint_arrays(model, q=q, qd=qd, tau=tau)
        qdd, ok = plain.forward_dynamics(model, q, qd, tau, gravity(), np.zeros((1, 6)))
        if not ok:
            raise singular(model)
        return qdd

    return _kernel(model, "plain", "", rnea,
                   lambda q: rnea(q, np.zeros(np.shape(q)), np.zeros(np.shape(q))),
                   mass_matrix, forward_dynamics,
                   lambda q: numpy_jacobian(model, q, None, None, "world"))


def _vector(one, many, c, n, slow, done=True, failure=None):
    """
    Return f(q, qd, x) -> vector (n,) or (N, n) by the kernels ``one``/``many``, else ``slow``.

    The kernels (machine-code entries or the ahead-of-time extension's functions: neither
    checks the types of its arguments, ``compiled.entry``) get float64 arrays of their
    signature's dimensions only, and check shapes, order and finiteness themselves; they write
    ``out`` and return ``done`` (rnea's: True; the ABA's: 0); any other status sends the call
    to ``slow``, which checks the arguments and names what is wrong, except 2 (the ABA: B
    singular), for which ``failure()`` is raised.
    """
    def call(q, qd, x, _one=one, _many=many, _c=c, _n=n, _empty=np.empty, _f64=FLOAT64,
             _slow=slow, _done=done):
        status = None
        try:
            if q.dtype is _f64 and qd.dtype is _f64 and x.dtype is _f64:
                ndim = q.ndim
                if ndim == 1 and qd.ndim == 1 and x.ndim == 1:
                    out = _empty(_n)
                    status = _one(_c, q, qd, x, out)
                elif ndim == 2 and qd.ndim == 2 and x.ndim == 2:
                    out = _empty(q.shape)
                    status = _many(_c, q, qd, x, out)
        except AttributeError:      # (not arrays)
            pass
        if status == _done:
            return out
        if status == 2 and failure is not None:
            raise failure()
        return _slow(q, qd, x)
    return call


def _positions(one, many, c, slow):
    """Return f(q) -> vector (n,) or (N, n) by the kernels' entries ``one``/``many``, else slow."""
    def call(q, _one=one, _many=many, _c=c, _empty=np.empty, _f64=FLOAT64, _slow=slow):
        try:
            if q.dtype is _f64:                 # (the kernels' entries need float64: entry)
                out = _empty(q.shape)
                ndim = q.ndim
                if ndim == 1:
                    if _one(_c, q, out):
                        return out
                elif ndim == 2 and _many(_c, q, out):
                    return out
        except (AttributeError, TypeError, ValueError):   # (not an array; a bad shape)
            pass
        return _slow(q)
    return call


def _matrix(one, many, c, shape, slow):
    """Return f(q) -> array ``shape`` or (N,) + ``shape`` by the kernels' entries, else slow."""
    rows, columns = shape

    def call(q, _one=one, _many=many, _c=c, _shape=shape, _rows=rows, _columns=columns,
             _empty=np.empty, _f64=FLOAT64, _slow=slow):
        try:
            if q.dtype is _f64:
                ndim = q.ndim
                if ndim == 1:
                    out = _empty(_shape)
                    if _one(_c, q, out):
                        return out
                elif ndim == 2:
                    # (a literal tuple: q.shape[:1] + _shape cost 0.1 us, a tenth of the call)
                    out = _empty((len(q), _rows, _columns))
                    if _many(_c, q, out):
                        return out
        except (AttributeError, TypeError, ValueError):
            pass
        return _slow(q)
    return call


def _accelerations(one, many, c, model, slow):
    """Return f(q, qd, tau) -> qdd by the ABA kernels (SingularityError if B is singular)."""
    return _vector(one, many, c, model.n, slow, 0, lambda: singular(model))
