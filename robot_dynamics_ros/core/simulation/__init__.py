"""
Forward-dynamics simulation of a robot model, without ROS.

    from robot_dynamics_ros.core import RobotModel, simulate
    model = RobotModel.named("puma560")
    run = simulate(model, q0, qd0, duration=2.0, dt=1e-3, torque=None, integrator="rk4")
    run.t, run.q, run.qd, run.qdd, run.tau      # one row per step, the initial state included

* ``simulate.py`` -- ``simulate(...)`` and its :class:`SimulationResult` (also the counts of
  saturated torques and of steps ended on a joint stop, v_s, integrator, dt);
  ``torque`` is None, an (n,) constant or a controller ``(t, q, qd) -> tau`` held over each step.
* ``simulator.py`` -- :class:`Simulator`: the stepping state the ROS simulator node advances in
  real time (``step(tau)``); effort saturation (counted), joint limits as inelastic stops.
* ``dynamics.py`` -- qdd = B^{-1}(tau - n_v) (Siciliano et al. 2009, eqs. 7.115-7.116), rotors and
  viscous friction included; each RK4 step one call into the core's compiled kernels (the
  same for every robot), or plain Python without numba.
* ``friction.py`` -- Coulomb friction as an implicit stick-slip step (no chatter, no creep).
* ``integrators.py`` -- RK4 (Turney et al. 1980, Sect. 7), semi-implicit Euler, scipy
  ``solve_ivp``.
* ``linear_solve.py`` -- straight-line Cholesky solve of B x = b.
* ``energy.py`` -- kinetic, potential and mechanical energy (the conservation check).
* ``noise.py`` -- :class:`MeasurementNoise` and :func:`measured`: Gaussian sensor noise on
  position, velocity and effort, e.g. for identification experiments.
"""
from .energy import kinetic_energy, mechanical_energy, potential_energy
from .integrators import INTEGRATORS
from .noise import MeasurementNoise, measured
from .simulate import EffortSaturationWarning, SimulationResult, simulate
from .simulator import Simulator

__all__ = ["simulate", "SimulationResult", "Simulator", "EffortSaturationWarning", "INTEGRATORS",
           "MeasurementNoise", "measured", "kinetic_energy",
           "potential_energy", "mechanical_energy"]
