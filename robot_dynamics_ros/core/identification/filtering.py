"""
Velocities and accelerations from recorded positions by zero-phase filtering, offline.

Seed 002 (Sect. 7.4, L877): the accelerations are reconstructed off line from the recorded
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
4. for identification (:func:`identification_data`) the torques are *not* filtered: tau = Y pi
   holds sample by sample, and white torque noise stays white (independent errors, as the
   least-squares standard deviations assume) only if it is left alone.  Filtering tau would also
   need the same filter on every column of Y (Gautier's parallel filtering), since friction's
   sgn(qd) and the products of velocities do not commute with a low-pass; leaving tau raw avoids
   that bias (tested: Coulomb friction came out 20 % low with filtered torques).  The first and
   last 2 / f_c seconds are dropped (filter start-up), and so are the samples within 0.25 / f_c
   of a velocity reversal and those where a joint moves at under 2 % of its peak speed (Coulomb
   friction's jump, or sticking, makes the acceleration jump there, which no low-pass estimate
   follows); every ``decimate``-th sample is kept.
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
REVERSAL_WINDOW = 0.25    # samples left out on each side of a reversal, in 1 / f_c
SLOW = 0.02               # speed below which a joint may stick, fraction of its peak
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


def reversal_mask(qd: np.ndarray, half_width: int) -> np.ndarray:
    """
    Return the samples near a velocity reversal of any joint, or slower than 2 % of its peak.

    Coulomb friction jumps by 2 F_s where a joint's velocity changes sign, so its acceleration
    jumps too, and no low-pass estimate of the acceleration follows the jump: near a reversal the
    estimated qdd is wrong by about 2 F_s / B_jj whatever the filter.  Identification drops those
    samples, ``half_width`` on each side (the usual practice, e.g. Gautier's), and the samples
    where a joint moves at less than ``SLOW`` of its peak speed (where it may stick).
    """
    sign = np.sign(qd)
    flips = np.flatnonzero(np.any(sign[1:] != sign[:-1], axis=1))
    # a joint that sticks (stick-slip) has friction anywhere in [-F_s, F_s]: slow samples go too
    mask = np.any(np.abs(qd) < SLOW * np.abs(qd).max(axis=0), axis=1)
    for k in flips:
        mask[max(k - half_width, 0):k + half_width + 2] = True
    return mask


def identification_data(t, q, tau, qd=None, cutoff: float | None = None,
                        method: str = "butterworth", decimate: int = 1,
                        exclude_reversals: bool = True) -> IdentificationData:
    """
    Turn positions (and velocities) and torques recorded at ``t`` into samples for identify.

    The filter start-up (2 / f_c at each end) is dropped, and with ``exclude_reversals`` the
    samples within 0.25 / f_c of a velocity reversal or slower than 2 % of their joint's peak
    speed (:func:`reversal_mask`); then every
    ``decimate``-th sample is kept.
    """
    t, tau = _as_series(t, tau, "torques")
    if int(decimate) < 1:
        raise InputError(f"decimate: must be a positive integer, got {decimate}")
    d = derivatives(t, q, qd, cutoff, method)
    tau_u = uniform_clock(t, tau)[1] if d.t.size != t.size or not np.array_equal(d.t, t) else tau
    edge = int(np.ceil(2.0 * d.sample_rate / d.cutoff))
    if d.t.size - 2 * edge < 16:
        raise InputError(
            f"recording too short: {d.t.size} samples at {d.sample_rate:.6g} Hz leave "
            f"{max(d.t.size - 2 * edge, 0)} after dropping the filter start-up "
            f"({edge} samples each end at a cut-off of {d.cutoff:.3g} Hz)")
    keep = np.zeros(d.t.size, dtype=bool)
    keep[edge:d.t.size - edge] = True
    if exclude_reversals:
        keep &= ~reversal_mask(d.qd, int(np.ceil(REVERSAL_WINDOW * d.sample_rate / d.cutoff)))
    keep = np.flatnonzero(keep)[::int(decimate)]
    return IdentificationData(d.t[keep], d.q[keep], d.qd[keep], d.qdd[keep], tau_u[keep],
                              d.cutoff, d.sample_rate, int(decimate))
