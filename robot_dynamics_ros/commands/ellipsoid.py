"""
robot-dynamics ellipsoid <robot> --q ...: the dynamic manipulability ellipsoid at a configuration.

Prints the semi-axes, their directions and the gravity-induced centre of Siciliano et al. 2009's
ellipsoid (7.148) for the tool point's acceleration.  Planar arms (all joint axes along one world
axis) use the two coordinates of their plane; spatial arms the three of the position, or
``--task``.  With
``--plot`` a planar arm is drawn in its plane with the ellipse at its tip, with and without
gravity, as Siciliano et al. 2009's Fig. 7.15; a spatial arm as three 2-D projections (x-y, x-z,
y-z) of the arm and of the ellipsoid (its shadows).
"""
from __future__ import annotations

import numpy as np

from ..core import forward_kinematics, InputError, tool_pose
from ..core.task_space import dynamic_manipulability, projected_ellipse
from ..core.task_space.task import parse_task, planar_task_rows, ROW_NAMES
from .robot_argument import add_robot_argument, load_robot

HELP = ("dynamic manipulability ellipsoid at a configuration (Siciliano et al. 2009, eq. 7.148), "
        "optionally plotted")
AXES = "xyz"


def add_arguments(parser):
    """Add the command's arguments to ``parser``."""
    add_robot_argument(parser)
    parser.add_argument("--q", type=float, nargs="+", required=True, metavar="Q",
                        help="joint positions (rad or m), one per joint")
    parser.add_argument("--task", help="task rows: 'position', 'pose' or indices into "
                                       "vx,vy,vz,wx,wy,wz such as '0,1' (default: the arm's "
                                       "plane for a planar arm, else 'position')")
    parser.add_argument("--torque-limits", action="store_true",
                        help="normalise the joint torques by their effort limits")
    parser.add_argument("--plot", metavar="PNG", help="draw the arm and the ellipse(s)")


def run(args) -> int:
    """Compute, print and optionally plot the ellipsoid."""
    model = load_robot(args)
    q = np.asarray(args.q, dtype=float)
    task = parse_task(args.task) if args.task else planar_task_rows(model, q) or "position"
    ellipsoid = dynamic_manipulability(model, q, task=task, torque_limited=args.torque_limits)
    if args.plot:
        plot(model, q, ellipsoid, args.plot)
    names = [ROW_NAMES[r] for r in ellipsoid.rows]
    unit = "m/s^2 and rad/s^2" if any(r >= 3 for r in ellipsoid.rows) else "m/s^2"
    torque = ("joint torques relative to their effort limits" if args.torque_limits
              else "joint torques in N m")
    print(f"{model.name}: dynamic manipulability ellipsoid at q = {q.tolist()}, task rows "
          f"{', '.join(names)} ({unit} for a unit norm of the {torque})")
    for k, (length, direction) in enumerate(zip(ellipsoid.semi_axes, ellipsoid.directions.T)):
        print(f"  semi-axis {k + 1}: {length:.6g} along "
              f"[{', '.join(f'{x:+.4f}' for x in direction)}]")
    print(f"  centre (gravity, -J B^-1 g): [{', '.join(f'{x:+.6g}' for x in ellipsoid.centre)}]")
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


def _ellipse_points(shape, centre, count=200):
    """Return points of the ellipse x^T shape x = 1 around ``centre``."""
    eig, vec = np.linalg.eigh(shape)
    t = np.linspace(0.0, 2.0 * np.pi, count)
    circle = np.stack([np.cos(t), np.sin(t)])
    return (vec @ (circle / np.sqrt(eig)[:, None])).T + centre


def plot(model, q, ellipsoid, path: str) -> None:
    """Draw the arm and the ellipse(s) at its tip (see the module docstring)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frames = forward_kinematics(model, q)
    points = np.vstack([frames[:, :3, 3], tool_pose(model, q)[:3, 3]])
    rows = list(ellipsoid.rows)
    position_rows = [r for r in rows if r < 3]
    planes = ([tuple(position_rows)] if len(position_rows) == 2
              else [(0, 1), (0, 2), (1, 2)] if len(position_rows) == 3 else [])
    if not planes:
        raise InputError("--plot: the task has fewer than two position rows to draw")
    reach = max(np.ptp(points[:, list(plane)], axis=0).max() for plane in planes) or 1.0
    # Drawn to scale: the longest semi-axis as 0.4 of the arm's extent; a gravity shift more than
    # 1.5 extents away (heavy arms, unit torques) is shown as an arrow instead of off the figure.
    scale = 0.4 * reach / max(ellipsoid.semi_axes.max(), 1e-300)
    fig, axes = plt.subplots(1, len(planes), figsize=(max(6.5, 5.5 * len(planes)), 6.0),
                             squeeze=False)
    tip = points[-1]
    for ax, plane in zip(axes[0], planes):
        i, j = plane
        ax.plot(points[:, i], points[:, j], "-o", color="0.3", lw=3, ms=5, label="arm")
        shape, centre = projected_ellipse(ellipsoid, [rows.index(i), rows.index(j)])
        at_tip = tip[[i, j]]
        no_gravity = _ellipse_points(shape / scale ** 2, at_tip)
        ax.plot(no_gravity[:, 0], no_gravity[:, 1], "--", color="C0", label="without gravity")
        shift = scale * centre
        if np.linalg.norm(shift) <= 1.5 * reach:
            with_gravity = _ellipse_points(shape / scale ** 2, at_tip + shift)
            ax.plot(with_gravity[:, 0], with_gravity[:, 1], color="C3", label="with gravity")
            ax.plot(*(at_tip + shift), "+", color="C3")
        else:
            arrow = 0.5 * reach * shift / np.linalg.norm(shift)
            ax.annotate("", xy=at_tip + arrow, xytext=at_tip,
                        arrowprops={"arrowstyle": "->", "color": "C3"})
            ax.text(*(at_tip + arrow), f"  gravity: centre shifted by\n  "
                    f"{np.linalg.norm(centre):.3g} m/s^2 (off the figure)", color="C3", fontsize=8)
        ax.set_xlabel(f"{AXES[i]} [m]")
        ax.set_ylabel(f"{AXES[j]} [m]")
        ax.set_aspect("equal", adjustable="datalim")
        ax.grid(True, lw=0.3)
    axes[0][0].legend(loc="best", fontsize=8)
    torque = "torque / effort limit" if ellipsoid.torque_limited else "torque in N m"
    fig.suptitle(f"{model.name}: dynamic manipulability ellipsoid "
                 "(Siciliano et al. 2009, eq. 7.148)\n"
                 f"unit norm of {torque}; drawn at 1 m = {1.0 / scale:.3g} m/s^2", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
