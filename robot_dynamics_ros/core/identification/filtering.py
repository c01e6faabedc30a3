"""
Velocities and accelerations from recorded positions by zero-phase filtering, offline.

Siciliano et al. 2009 (Sect. 7.4): the accelerations are reconstructed off line from the recorded
positions (and velocities), and because nothing runs in real time the filter may be anti-causal,
so it need not delay the signal.  Here:

1. the samples are put on a uniform clock (cubic interpolation at the median sample period, when
   the stamps jitter by more than 1 %);
2. the cut-off is chosen from the data: from the power spectral density of each joint's position
   differences (Welch, Hann window), the noise floor is the median level of the upper half of the
   spectrum, and the cut-off is the highest frequency at which any joint's spectrum still stands
   ``SIGNAL_OVER_NOISE`` (20 dB) above its floor, times ``CUTOFF_MARGIN`` (4), within
   [8 frequency bins, 0.4 x sample rate];
3. ``butterworth``: a 4th-order Butterworth low-pass run forward and backward (``filtfilt``, zero
   phase), then second-order central differences; ``savgol``: a Savitzky-Golay fit of degree 4
   whose window gives the same cut-off (Schafer 2011: f_c = (d + 1) / (3.2 M - 4.6) x f_s / 2 for
   half-width M), differentiated analytically;
4. for identification (:func:`identification_data`) the filtered q, qd, qdd are evaluated back
   at the recorded stamps (cubic splines of the smooth filtered signals) and the torques are
   *not* filtered or interpolated: tau = Y pi
   holds sample by sample, and white torque noise stays white (independent errors, as the
   least-squares standard deviations assume) only if it is left alone.  Filtering tau would also
   need the same filter on every column of Y (Gautier's parallel filtering), since friction's
   sgn(qd) and the products of velocities do not commute with a low-pass; leaving tau raw avoids
   that bias (tested: Coulomb friction came out 20 % low with filtered torques).  The first and
   last 2 / f_c seconds are dropped (filter start-up), and so are the samples within 0.25 / f_c
   of a velocity reversal and those where a joint moves at under 2 % of its peak speed (Coulomb
   friction's jump, or sticking, makes the acceleration jump there, which no low-pass estimate
   follows), counting only joints that move (a range of at least 0.01 rad or m: a joint held
   still only has noise for a velocity); every ``decimate``-th sample is kept.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.interpolate
import scipy.signal

from ..errors import InputError

SIGNAL_OVER_NOISE = 100.0     # power ratio, 20 dB
ORDER = 4
# cut-off / highest frequency seen: a 4th-order filtfilt passes 0.25 f_c to 3e-5
CUTOFF_MARGIN = 4.0
REVERSAL_WINDOW = 0.25     # samples left out on each side of a reversal, in 1 / f_c
SLOW = 0.02               # speed below which a joint may stick, fraction of its peak
STILL = 0.01              # a joint whose positions span less (rad or m) is held still
METHODS = ("butterworth", "savgol")


class Derivatives(NamedTuple):
    """Filtered positions and their derivatives on a uniform clock."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    cutoff: float          # Hz
    sample_rate: float     # Hz
    method: str


class IdentificationData(NamedTuple):
    """Samples ready for ``identify``: filtered, trimmed and decimated (module docstring)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    cutoff: float
    sample_rate: float     # of the input, Hz
    decimation: int
    index: np.ndarray = np.zeros(0, dtype=int)    # of each sample in the recording
    bad_torques: int = 0   # samples left out for a non-finite torque

    def subset(self, rows) -> "IdentificationData":
        """Return the samples ``rows`` (indices or a mask) of these."""
        return self._replace(t=self.t[rows], q=self.q[rows], qd=self.qd[rows],
                             qdd=self.qdd[rows], tau=self.tau[rows], index=self.index[rows])


def _as_series(t, x, name):
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    if t.ndim != 1 or t.size < 16:
        raise InputError(f"{name}: need at least 16 time stamps, got {t.size}")
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[0] != t.size:
        raise InputError(f"{name}: {x.shape[0]} samples for {t.size} time stamps")
    if not (np.isfinite(t).all() and np.isfinite(x).all()):
        raise InputError(f"{name}: contains NaN or infinite values")
    if np.any(np.diff(t) <= 0):
        k = int(np.argmax(np.diff(t) <= 0))
        raise InputError(
            f"{name}: time stamps not increasing at sample {k + 1} ({t[k]} -> {t[k + 1]})")
    return t, x


def uniform_clock(t, *signals):
    """
    Return the samples on a uniform clock.

    (t_uniform, signals...) on a uniform clock at the median period; unchanged if the stamps
    already are uniform to 1 %.
    """
    t = np.asarray(t, dtype=float)
    dt = float(np.median(np.diff(t)))
    if np.all(np.abs(np.diff(t) - dt) <= 0.01 * dt):
        return (t,) + tuple(np.asarray(s, dtype=float) for s in signals)
    count = int(np.floor((t[-1] - t[0]) / dt)) + 1
    tu = t[0] + dt * np.arange(count)
    return (tu,) + tuple(scipy.interpolate.CubicSpline(t, s, axis=0)(tu) for s in signals)


def choose_cutoff(x: np.ndarray, sample_rate: float) -> float:
    """
    Return the cut-off frequency (Hz) where the signals meet their noise floor (module docstring).

    The spectrum is taken of the first differences (a smooth motion's spectrum falls steeply,
    white measurement noise's does not; differencing narrows the range between them, so that the
    window's leakage from the motion does not hide the floor), with a Hann window as long as the
    record allows (up to 2^16 samples).
    """
    x = np.diff(np.asarray(x, dtype=float).reshape(x.shape[0], -1), axis=0)
    nperseg = int(min(x.shape[0], 2 ** 16))
    f, P = scipy.signal.welch(x, fs=sample_rate, window="hann", nperseg=nperseg, axis=0)
    upper = f >= f[-1] / 2
    highest = 0.0
    for j in range(P.shape[1]):
        floor = np.median(P[upper, j])
        peak = P[:, j].max()
        if peak <= 0:
            continue
        above = np.flatnonzero(P[:, j] > max(SIGNAL_OVER_NOISE * floor, 1e-12 * peak))
        if above.size:
            highest = max(highest, f[above[-1]])
    resolution = f[1] - f[0]
    return float(np.clip(CUTOFF_MARGIN * highest, 8 * resolution, 0.4 * sample_rate))


def lowpass(x: np.ndarray, sample_rate: float, cutoff: float) -> np.ndarray:
    """Return zero-phase Butterworth low-pass (order 4, run forward and backward) along axis 0."""
    sos = scipy.signal.butter(ORDER, cutoff, fs=sample_rate, output="sos")
    return scipy.signal.sosfiltfilt(sos, x, axis=0)


def _savgol_window(sample_rate, cutoff, degree=4):
    half = int(np.ceil(((degree + 1) * sample_rate / (2.0 * cutoff) + 4.6) / 3.2))
    return 2 * max(half, degree // 2 + 1) + 1


def derivatives(t, q, qd=None, cutoff: float | None = None,
                method: str = "butterworth") -> Derivatives:
    """
    Return filtered positions and their first two derivatives.

    Filtered q and its first two derivatives (N, n) from positions sampled at ``t`` (N,).

    ``qd``: measured velocities, if any (then filtered and differentiated once for qdd, and q is
    only filtered).  ``cutoff`` in Hz, or None to choose it from the data.
    """
    if method not in METHODS:
        raise InputError(f"method must be one of {list(METHODS)}, got {method!r}")
    t, q = _as_series(t, q, "positions")
    if qd is not None:
        _, qd = _as_series(t, qd, "velocities")
        t, q, qd = uniform_clock(t, q, qd)
    else:
        t, q = uniform_clock(t, q)
    dt = float(t[1] - t[0])
    fs = 1.0 / dt
    if cutoff is None:
        cutoff = choose_cutoff(q, fs)
    elif not (0.0 < cutoff < fs / 2):
        raise InputError(
            f"cutoff {cutoff} Hz: must lie between 0 and half the sample rate ({fs / 2:.6g} Hz)")
    if method == "butterworth":
        qf = lowpass(q, fs, cutoff)
        if qd is None:
            qdf = np.gradient(qf, dt, axis=0, edge_order=2)
        else:
            qdf = lowpass(qd, fs, cutoff)
        qddf = np.gradient(qdf, dt, axis=0, edge_order=2)
    else:
        window = min(_savgol_window(fs, cutoff), q.shape[0] - (1 - q.shape[0] % 2))

        def sg(x, k):
            return scipy.signal.savgol_filter(x, window, 4, deriv=k, delta=dt, axis=0)

        qf = sg(q, 0)
        qdf = sg(q, 1) if qd is None else sg(qd, 0)
        qddf = sg(q, 2) if qd is None else sg(qd, 1)
    return Derivatives(t, qf, qdf, qddf, float(cutoff), fs, method)


def moving_joints(q: np.ndarray) -> np.ndarray:
    """Return which joints move: a range of filtered positions of at least ``STILL`` (rad or m)."""
    return np.ptp(q, axis=0) >= STILL


def reversal_mask(qd: np.ndarray, half_width, moving=None) -> np.ndarray:
    """
    Return the samples near a velocity reversal of any joint, or slower than 2 % of its peak.

    Coulomb friction jumps by 2 F_s where a joint's velocity changes sign, so its acceleration
    jumps too, and no low-pass estimate of the acceleration follows the jump: near a reversal the
    estimated qdd is wrong by about 2 F_s / B_jj whatever the filter.  Identification drops those
    samples, ``half_width`` on each side (samples; one number, or one per joint), the usual
    practice (e.g. Gautier's), and the samples where a joint moves at less than ``SLOW`` of its
    peak speed (where it may stick).  Only the ``moving`` joints count (default all): a joint held
    still has a velocity that is noise around zero, reversing all the time, and would leave no
    sample at all.
    """
    n = qd.shape[1]
    moving = np.ones(n, dtype=bool) if moving is None else np.asarray(moving, bool)
    widths = np.broadcast_to(np.asarray(half_width, dtype=int), (n,))
    mask = np.zeros(qd.shape[0], dtype=bool)
    for j in np.flatnonzero(moving):
        sign = np.sign(qd[:, j])
        # a joint that sticks (stick-slip) has friction anywhere in [-F_s, F_s]: slow samples go
        mask |= np.abs(qd[:, j]) < SLOW * np.abs(qd[:, j]).max()
        for k in np.flatnonzero(sign[1:] != sign[:-1]):
            mask[max(k - widths[j], 0):k + widths[j] + 2] = True
    return mask


def step_settling(error: float) -> float:
    """
    Return how long after a step (in 1 / f_c) the zero-phase filter is within ``error`` of it.

    The 4th-order Butterworth run forwards and backwards (``lowpass``), measured on a unit step:
    within 0.1 from 0.22 / f_c, 0.05 from 0.62 / f_c, 0.01 from 1.2 / f_c.  Identification uses
    it to leave out, around a joint's velocity reversals, the samples where the filtered
    acceleration still carries more of the Coulomb jump than the torque noise.
    """
    profile = _step_profile()
    beyond = np.flatnonzero(profile > error)
    return float(beyond[-1] + 1) / STEP_RESOLUTION if beyond.size else 0.0


_PROFILE: list = []
STEP_RESOLUTION = 200     # samples per 1 / f_c in the step response table


def _step_profile() -> np.ndarray:
    """Return the largest step error at or beyond each distance from the step (table, cached)."""
    if not _PROFILE:
        half = 8 * STEP_RESOLUTION
        x = np.zeros(2 * half)
        x[half:] = 1.0
        error = np.abs(lowpass(x, float(STEP_RESOLUTION), 1.0) - x)
        distance = np.maximum(error[half:], error[:half][::-1])
        _PROFILE.append(np.maximum.accumulate(distance[::-1])[::-1])
    return _PROFILE[0]


def _at_stamps(d: Derivatives, t: np.ndarray):
    """Return the filtered q, qd, qdd at the recorded stamps (cubic splines of smooth signals)."""
    if d.t.size == t.size and np.array_equal(d.t, t):
        return d.q, d.qd, d.qdd
    return tuple(scipy.interpolate.CubicSpline(d.t, x, axis=0)(t) for x in (d.q, d.qd, d.qdd))


def identification_data(t, q, tau, qd=None, cutoff: float | None = None,
                        method: str = "butterworth", decimate: int = 1,
                        exclude_reversals: bool = True,
                        reversal_window=REVERSAL_WINDOW) -> IdentificationData:
    """
    Turn positions (and velocities) and torques recorded at ``t`` into samples for identify.

    The positions are filtered on a uniform clock and the filtered q, qd, qdd evaluated back at
    the recorded stamps, where the torques were measured (the raw torques are never
    interpolated).  Samples with a non-finite torque (marked bad by the caller) are left out and
    counted.  The filter start-up (2 / f_c at each end) is dropped, and with
    ``exclude_reversals`` the samples within 0.25 / f_c of a velocity reversal of a moving joint
    or slower than 2 % of its peak speed (:func:`reversal_mask`; ``reversal_window``: in
    1 / f_c, one number or one per joint); then every ``decimate``-th sample is kept.
    """
    t, q = _as_series(t, q, "positions")
    tau = np.asarray(tau, dtype=float)
    tau = tau[:, None] if tau.ndim == 1 else tau
    if tau.shape[0] != t.size:
        raise InputError(f"torques: {tau.shape[0]} samples for {t.size} time stamps")
    if int(decimate) < 1:
        raise InputError(f"decimate: must be a positive integer, got {decimate}")
    d = derivatives(t, q, qd, cutoff, method)
    edge = 2.0 / d.cutoff
    keep = (t >= d.t[0] + edge) & (t <= d.t[-1] - edge)
    if np.count_nonzero(keep) < 16:
        raise InputError(
            f"recording too short: {d.t.size} samples at {d.sample_rate:.6g} Hz leave "
            f"{np.count_nonzero(keep)} after dropping the filter start-up "
            f"({edge:.3g} s at each end at a cut-off of {d.cutoff:.3g} Hz)")
    if exclude_reversals:
        half = np.ceil(np.asarray(reversal_window, float) * d.sample_rate / d.cutoff)
        near = reversal_mask(d.qd, half, moving_joints(d.q))
        nearest = np.clip(np.rint((t - d.t[0]) * d.sample_rate).astype(int), 0, d.t.size - 1)
        keep &= ~near[nearest]
    bad = ~np.isfinite(tau).all(axis=1)
    keep &= ~bad
    index = np.flatnonzero(keep)[::int(decimate)]
    fq, fqd, fqdd = _at_stamps(d, t)
    return IdentificationData(t[index], fq[index], fqd[index], fqdd[index], tau[index],
                              d.cutoff, d.sample_rate, int(decimate), index,
                              int(np.count_nonzero(bad)))
