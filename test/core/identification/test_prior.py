"""
The prior-regularised consistent fit (physical.py: the log-det divergence, Lee, Wensing, Park).

Oracles: constructed data whose information about each base parameter is set by hand (R diagonal
in the base parameters), so what the data determine and what they do not is known exactly; the
eigenvalues of a link's inertia about its centre of mass for the nearest real body.
"""
import warnings

import numpy as np
import pytest

from robot_dynamics_ros.core import RobotModel
from robot_dynamics_ros.core.identification import (base_parameters, consistency_problems,
                                                    parameter_vector)
from robot_dynamics_ros.core.identification.parameters import link_parameters, parameter_layout
from robot_dynamics_ros.core.identification.physical import (InconsistentPriorWarning,
                                                             PRIOR_FLOOR, consistent_fit,
                                                             consistent_prior)

PUMA = RobotModel.named("puma560")
KINDS = ("viscous",)
WEAK = "Izz[joint6]"


def _constructed():
    """
    Return (prior, truth, K, R, y, names): data that see every base parameter but ``WEAK``.

    The truth is the file's robot with joint 6's Izz 30 % larger (the ``WEAK`` base parameter,
    seen only with a relative precision of 1 %: 30 % off costs the data 0.09 in chi-square) and
    every viscous friction 1.5 x the file's (seen to 1e-4 relative).
    """
    base = base_parameters(PUMA, KINDS)
    K = base.combination
    prior = parameter_vector(PUMA, KINDS)
    layout = parameter_layout(PUMA, KINDS)
    truth = prior.copy()
    truth[layout.link[5, 9]] *= 1.3
    truth[layout.viscous] *= 1.5
    assert consistency_problems(PUMA, truth, friction=KINDS) == []
    scale = np.maximum(np.abs(K @ prior), 1e-3 * np.abs(K @ prior).max())
    precision = np.full(base.count, 1e4)
    precision[base.names.index(WEAK)] = 1.0
    R = np.diag(precision / scale)
    return prior, truth, K, R, R @ K @ truth, base.names


@pytest.mark.parametrize("weight", [1.0, 100.0])
def test_the_divergence_keeps_a_weakly_seen_direction_at_the_prior_and_fits_the_rest(weight):
    """
    The divergence holds what the data barely see at the prior; the data decide the rest.

    With the prior's divergence the weak base parameter stays at the file's value (within 5 % of
    the gap to the truth), every well-seen one (friction 50 % off the file) comes out within
    1e-3 of the truth; without it (weight 0, the vanishing ridge alone) the weak one follows the
    data to the truth.
    """
    prior, truth, K, R, y, names = _constructed()
    weak = names.index(WEAK)
    fitted = consistent_fit(PUMA, R, y, K, prior, KINDS, weight=weight)
    assert fitted is not None
    theta, true, start = K @ fitted, K @ truth, K @ prior
    gap = true[weak] - start[weak]
    assert abs(theta[weak] - start[weak]) < 0.05 * abs(gap)
    others = np.arange(len(names)) != weak
    error = np.abs(theta - true)[others] / np.maximum(np.abs(true[others]), 1e-3)
    assert error.max() < 1e-3, names[int(np.flatnonzero(others)[np.argmax(error)])]
    plain = K @ consistent_fit(PUMA, R, y, K, prior, KINDS, estimate=truth)
    assert abs(plain[weak] - true[weak]) < 0.05 * abs(gap)


def test_a_prior_that_is_no_real_body_becomes_the_nearest_one_named():
    """
    A prior link that is no real body becomes the nearest real body, named in a warning.

    A link whose inertia breaks the triangle inequality (as two of Kinova's Gen3 URDF links do)
    is no failure: the prior keeps its mass and CoM, its second moments about the CoM become
    non-negative (at least PRIOR_FLOOR x the largest), the principal axes stay, and the warning
    names the joint; a real link is kept as it is.
    """
    layout = parameter_layout(PUMA, KINDS)
    prior = parameter_vector(PUMA, KINDS)
    broken = np.diag([0.001, 0.002, 0.02])            # 0.001 + 0.002 < 0.02: no body
    prior[layout.link[3]] = link_parameters(2.0, [0.0, 0.05, 0.0], broken)
    with pytest.warns(InconsistentPriorWarning, match="'joint4'") as caught:
        J = consistent_prior(PUMA, prior, KINDS, warn=True)
    assert "'joint2'" not in str(caught[0].message)
    m, h = J[3, 3, 3], J[3, :3, 3]
    assert m == pytest.approx(2.0) and np.allclose(h / m, [0.0, 0.05, 0.0])
    sigma_c = J[3, :3, :3] - np.outer(h, h) / m
    moments = np.linalg.eigvalsh(sigma_c)
    assert moments[0] >= PRIOR_FLOOR * moments[-1] * (1 - 1e-9)
    # broken's second moments about the CoM: (tr/2 - I) = 0.0105, 0.0095, -0.0085 on x, y, z
    assert np.allclose(np.diag(sigma_c)[:2], [0.0105, 0.0095])
    assert np.allclose(sigma_c - np.diag(np.diag(sigma_c)), 0.0, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        real = consistent_prior(PUMA, parameter_vector(PUMA, KINDS), KINDS, warn=True)
    assert np.all(np.linalg.eigvalsh(real) > 0)


def test_the_paired_standard_error_counts_the_samples_correlation():
    """
    The weight check's standard error of a mean of correlated differences (``paired_error``).

    Oracle: an AR(1) series x_t = phi x_(t-1) + e_t has the integrated autocorrelation time
    (1 + phi) / (1 - phi) in closed form, so the standard error of its mean is
    sqrt(var x (1 + phi) / ((1 - phi) N)); the estimate is within 20 % of it (Sokal's windowed
    estimator at N = 20,000, tau = 19: about 7 % spread), where the independent-samples formula
    is 4.4 x too small.  White noise gives std / sqrt(N).
    """
    from robot_dynamics_ros.core.identification.identify import paired_error
    rng = np.random.default_rng(3)
    phi, size = 0.9, 20000
    x = np.zeros(size)
    noise = rng.normal(size=size)
    for t in range(1, size):
        x[t] = phi * x[t - 1] + noise[t]
    exact = np.sqrt(1.0 / (1.0 - phi ** 2) * (1.0 + phi) / (1.0 - phi) / size)
    assert paired_error(x) == pytest.approx(exact, rel=0.2)
    white = rng.normal(size=size)
    assert paired_error(white) == pytest.approx(1.0 / np.sqrt(size), rel=0.1)


@pytest.mark.parametrize("weight", [10.0, 100.0])
def test_the_drive_prior_keeps_an_unexcited_rotor_at_the_file_and_fits_an_excited_one(weight):
    """
    The Gaussian prior on the drives holds an unseen rotor inertia; a seen one follows the data.

    Constructed data (R diagonal in the base parameters): the truth has the rotor inertias of
    joints 4 and 5 both 1.5 x the file's; Im[joint4] is seen with a relative precision of 1
    (50 % off costs the data 0.25 in chi-square), Im[joint5] with 1e-4.  The prior term
    gamma / 2 ((Im - Im0) / s)^2, s about the file's value, moves the weak one by
    0.5 / (1 + gamma s'), s' ~ 0.44: at most 19 % of the gap at gamma 10, 2.2 % at 100; the seen
    one comes out within 1e-3 of the truth.  Without the prior (weight 0) the weak one follows
    the data to the truth.
    """
    base = base_parameters(PUMA, KINDS)
    K, names = base.combination, base.names
    prior = parameter_vector(PUMA, KINDS)
    rotor = parameter_layout(PUMA, KINDS).rotor
    truth = prior.copy()
    truth[rotor[3:5]] *= 1.5
    scale = np.maximum(np.abs(K @ prior), 1e-3 * np.abs(K @ prior).max())
    precision = np.full(base.count, 1e4)
    weak, seen = names.index("Im[joint4]"), names.index("Im[joint5]")
    scale[[weak, seen]] = np.abs(K @ prior)[[weak, seen]]      # relative to the rotors' own size
    precision[weak] = 1.0
    R = np.diag(precision / scale)
    y = R @ K @ truth
    gap = truth[rotor[3]] - prior[rotor[3]]
    fitted = consistent_fit(PUMA, R, y, K, prior, KINDS, weight=weight)
    assert fitted is not None
    moved = (fitted[rotor[3]] - prior[rotor[3]]) / gap
    assert 0.0 <= moved < (0.2 if weight == 10.0 else 0.03), moved
    assert abs(fitted[rotor[4]] / truth[rotor[4]] - 1.0) < 1e-3
    plain = consistent_fit(PUMA, R, y, K, prior, KINDS, estimate=truth)
    assert abs(plain[rotor[3]] / truth[rotor[3]] - 1.0) < 0.05
