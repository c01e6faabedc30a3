r"""
The generalized-momentum residual: an estimate of the external joint torques, in discrete time.

The observer of De Luca and Mattone (ICRA 2005; Haddadin et al., "Robot Collisions: A Survey on
Detection, Isolation, and Identification", IEEE T-RO 33(6), 2017, eq. 18-20) is

    r(t) = K_O (p(t) - \int_0^t (tau + C^T(q, qd) qd - g(q) - tau_f + r) ds - p(0)),  p = B(q) qd,

K_O = diag(k_i) > 0.  Since the robot obeys dp/dt = tau + tau_ext + C^T qd - g - tau_f
(``algorithms/momentum.py``), the residual is a first-order low-pass filter of the external
torque, one per joint, without any acceleration:

    dr/dt = K_O (tau_ext - r),      r_i(s) = k_i / (s + k_i) tau_ext,i(s).              (1)

Discrete time, exact for the sampling of each message.  The states arrive at t_0 < t_1 < ...
with intervals h_k = t_{k+1} - t_k that need not be equal.  Integrating the momentum balance over
one interval gives the *mean* external torque over it exactly:

    e_k = (1 / h_k) \int_{t_k}^{t_{k+1}} tau_ext dt
        = (p_{k+1} - p_k) / h_k - (1 / h_k) \int_{t_k}^{t_{k+1}} (tau + beta) dt,         (2)

beta = C^T qd - g - tau_f.  Holding tau_ext at e_k over the interval (the zero-order-hold
equivalent of (1), with the interval of this message), (1) has the exact solution

    r_{k+1} = a_k r_k + (1 - a_k) e_k,      a_k = exp(-k_i h_k)   (per joint),           (3)

stable for every h_k (a_k in (0, 1)), with unit static gain: a constant external torque is
reached without bias, and a step of tau_ext at a sample instant gives at the sample times exactly
the continuous response 1 - exp(-k_i t).  (Forward Euler on the integral form, r_{k+1} =
r_k + k_i h_k (...), is (3) to first order in k_i h_k, biased for larger k_i h_k and unstable
beyond k_i h_k = 2.)  r_0 = 0: the observer starts at the first message (p(0) = p_0).

The one approximation is the integral of tau + beta over the interval in (2), known only at its
ends:

* beta (a smooth function of the state) by the trapezoidal rule, whose error in e_k is at most
  h_k^2 / 12 max |d^2 beta / dt^2| (so, through the unit static gain, in r);
* tau by ``effort_timing``: "sample" (tau is a sample of a torque that varies continuously, e.g.
  a measured joint torque: the trapezoidal rule again, same error bound) or "interval" (the value
  that comes with sample k+1 is the torque applied since sample k, as a command held by the drive
  between updates, or the applied effort that the simulator publishes: then that term is exact).

Friction (the robot file's, Siciliano et al. 2009, eq. 7.114: tau_f = F_v qd + F_s sgn(qd), with
the further terms of ``core/control/friction.py``), when subtracted: F_v qd + F_v2 qd|qd| is part
of beta, and the Coulomb level F_s below is F_s + F_l |g(q)| (the mean of the interval's ends'
levels, where the load-dependent term makes it follow the position).  The Coulomb term is
constant, F_s sgn(qd), over an interval in which the joint slides one way, i.e. both ends'
velocities are beyond ``static_velocity`` with the same sign; then (2) is exact with it.
Otherwise (the joint sticks, stops or reverses within the interval) its mean is only known to
lie in [-F_s, F_s], as for the simulator's set-valued
friction (``simulation/friction.py``): the observer takes the value in that band that explains
most of the momentum change, i.e. e = u - clip(u, -F_s, F_s) with u the mean torque left over by
the other terms.  An external torque on a joint that sticks is indistinguishable from static
friction up to F_s: the observer cannot see it, and says nothing there.  (So the Coulomb term here
is the friction's mean over an interval, not the sample-wise law F_s sgn(qd) of
``core.control``, which would put up to F_s into the residual at every stop.)  Coupled drives
(``core/model/coupling.py``): p includes their rotor matrix (``algorithms.momentum``), and
their smooth friction on K qd (F_v, F_v2, a joint's joint-side F_vj) is part of beta through
the law's change ``model.coupled_friction_change``; their Coulomb friction, on sgn(K qd), is
refused (the band above is per joint).

Use: :class:`MomentumObserver` holds the state; :meth:`~MomentumObserver.update` takes one sample
(lists of floats, the per-message path of the node), :meth:`~MomentumObserver.update_many` a block
of samples (the dynamics in one batch, then the same recursion row by row: equal to
``update`` called per row up to rounding, as numpy's and the math module's sine may differ in the
last bit).  The implementation of g(q) is passed in (the caller
chooses, e.g. the generated model); p and C^T qd come from ``algorithms.momentum``.
"""
from __future__ import annotations

import math

import numpy as np

from ..algorithms.momentum import momentum_terms, momentum_values
from ..algorithms.rnea import gravity_torques
from ..errors import InputError
from ..inputs import joint_arrays
from .options import EFFORT_TIMINGS, ObserverOptions

__all__ = ["EFFORT_TIMINGS", "MomentumObserver", "ObserverOptions"]


class MomentumObserver:
    """
    The discrete-time momentum residual of one robot (see the module docstring).

    ``gravity``: g(q) for a list of n floats (a sequence back), e.g. the generated model's; None:
    the core's.  ``gravity_many``: the same for an (N, n) array (None: the core's batch).
    """

    def __init__(self, model, options: ObserverOptions, gravity=None, gravity_many=None):
        self.model = model
        self.options = options = options.checked(model)
        if options.friction:
            # a coupled drive's smooth friction is in beta; its Coulomb friction, on sgn(K qd),
            # would need the interval's set-valued step per drive, not per joint
            model.refuse_coupled_friction("the observer's Coulomb step (friction=False leaves "
                                          "friction out)", kinds=("coulomb", "joint_coulomb"))
        # (the coupled drives' friction as the law's change: model/coupling.py)
        self._coupled = bool(options.friction and model.coupled_drives and model.has_friction)
        self._gains = options.gains
        self._interval = options.effort_timing == "interval"
        self._vs = options.static_velocity
        self._viscous = model.viscous.tolist() if options.friction else [0.0] * model.n
        self._coulomb = model.coulomb.tolist() if options.friction else [0.0] * model.n
        # the further terms of control/friction.py: F_v2 qd|qd| (smooth, in beta) and F_l
        # |g(q)| (a Coulomb level that follows the load: the interval's mean of its ends')
        self._quadratic = model.viscous_quadratic.tolist() if options.friction else [0.0] * model.n
        self._load = model.coulomb_load.tolist() if options.friction else [0.0] * model.n
        self._sliding_known = [fs == 0.0 and fl == 0.0
                               for fs, fl in zip(self._coulomb, self._load)]
        self._gravity = gravity or (lambda q: gravity_torques(model, np.array(q)).tolist())
        self._gravity_many = gravity_many or (lambda q: gravity_torques(model, q))
        self.restarts = 0               # intervals longer than max_interval so far
        self.reset()

    def reset(self):
        """Forget every sample: the next one starts the observer (r = 0)."""
        self._last = None       # (t, p, beta, tau, qd, Coulomb levels) of the latest sample
        self._decay_dt, self._decay = None, None
        self.residual = [0.0] * self.model.n

    # -- one sample ----------------------------------------------------------------------------
    def _beta(self, q: list, qd: list, ctq: list, g) -> list:
        """Return beta = C^T qd - g - F_v qd - F_v2 qd|qd|: dp/dt's smooth part besides tau."""
        beta = [c - gi - fv * v - fq * v * abs(v)
                for c, gi, fv, fq, v in zip(ctq, g, self._viscous, self._quadratic, qd)]
        if self._coupled:
            beta = (np.array(beta) - self.model.coupled_friction_change(np.array(qd))).tolist()
        return beta

    def _levels(self, g) -> list:
        """Return each joint's Coulomb level at the sample, F_s + F_l |g(q)|."""
        return [fs + fl * abs(gi) for fs, fl, gi in zip(self._coulomb, self._load, g)]

    def update(self, t: float, q: list, qd: list, tau: list) -> list:
        """
        Take the sample at time ``t`` [s] (lists of n finite floats); return the residual r.

        InputError if ``t`` is not after the previous sample's (nothing is changed then).
        """
        p, ctq = momentum_values(self.model, q, qd)
        g = self._gravity(q)
        return self._advance(t, p, self._beta(q, qd, ctq, g), tau, qd, self._levels(g))

    def _advance(self, t, p, beta, tau, qd, levels) -> list:
        last = self._last
        if last is not None:
            dt = t - last[0]
            if not dt > 0.0:
                raise InputError(f"stamp {t:.9f} s is not after the previous sample's "
                                 f"({last[0]:.9f} s)")
            if dt > self.options.max_interval:
                self.restarts += 1
                self.residual = [0.0] * self.model.n
            else:
                self._filter(dt, last, p, beta, tau, qd, levels)
        self._last = (t, p, beta, tau, qd, levels)
        return self.residual

    def _decays(self, dt: float) -> list:
        """exp(-k_i dt) per joint (kept for the next interval of the same length)."""
        if dt != self._decay_dt:
            self._decay_dt = dt
            self._decay = [math.exp(-k * dt) for k in self._gains]
        return self._decay

    def _filter(self, dt, last, p, beta, tau, qd, levels):
        """Equations (2) and (3) of the module docstring over one interval."""
        _, p0, beta0, tau0, qd0, levels0 = last
        vs, interval = self._vs, self._interval
        r = self.residual
        out = [0.0] * len(r)
        for i, (a, smooth) in enumerate(zip(self._decays(dt), self._sliding_known)):
            fs = 0.5 * (levels0[i] + levels[i])
            torque = tau[i] if interval else 0.5 * (tau0[i] + tau[i])
            u = (p[i] - p0[i]) / dt - 0.5 * (beta0[i] + beta[i]) - torque
            if smooth:
                e = u
            elif qd0[i] > vs and qd[i] > vs:
                e = u + fs
            elif qd0[i] < -vs and qd[i] < -vs:
                e = u - fs
            else:                          # Coulomb friction somewhere in [-F_s, F_s]
                e = u - fs if u > fs else (u + fs if u < -fs else 0.0)
            out[i] = a * r[i] + (1.0 - a) * e
        self.residual = out

    # -- a block of samples --------------------------------------------------------------------
    def update_many(self, t, q, qd, tau) -> tuple[np.ndarray, np.ndarray]:
        """
        Take N samples in order: times ``t`` (N,) [s], ``q``, ``qd``, ``tau`` (N, n).

        Returns (r, accepted): r (N, n) after each sample (NaN rows where it was refused),
        accepted (N,) bool: False for a sample whose time is not after the previous accepted
        one (the node refuses such a message).  The numbers of :meth:`update` row by row.
        """
        (q, qd, tau), _ = joint_arrays(self.model, q=np.atleast_2d(q), qd=np.atleast_2d(qd),
                                       tau=np.atleast_2d(tau))
        t = np.asarray(t, dtype=float).reshape(-1)
        if t.shape != (q.shape[0],) or not np.isfinite(t).all():
            raise InputError(f"t: expected {q.shape[0]} finite times, got shape {t.shape}")
        r = np.full(q.shape, np.nan)
        accepted = np.zeros(t.shape, dtype=bool)
        if t.size == 0:
            return r, accepted
        p, ctq = momentum_terms(self.model, q, qd)
        g = np.asarray(self._gravity_many(q))
        beta = ctq - g - np.asarray(self._viscous) * qd - np.asarray(self._quadratic) * qd * \
            np.abs(qd)
        if self._coupled:
            beta = beta - self.model.coupled_friction_change(qd)
        levels = np.asarray(self._coulomb) + np.asarray(self._load) * np.abs(g)
        rows = zip(t.tolist(), p.tolist(), beta.tolist(), tau.tolist(), qd.tolist(),
                   levels.tolist())
        for k, (tk, pk, bk, uk, vk, lk) in enumerate(rows):
            last = self._last
            if last is not None and not tk > last[0]:
                continue
            r[k] = self._advance(tk, pk, bk, uk, vk, lk)
            accepted[k] = True
        return r, accepted
