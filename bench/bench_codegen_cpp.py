"""
Generated C++ (``robot-dynamics codegen --language cpp``) against Pinocchio's C++, in one binary.

    python3 bench/bench_codegen_cpp.py [--quick]

For the Puma 560, the Panda (config/robots), example-robot-data's UR5 and UFACTORY's xArm7
(7-DoF vendor URDF, test/data/urdf): the generated header of the rigid model and Pinocchio's
rnea, computeGeneralizedGravity, crba (then symmetrised) and aba on a Pinocchio model built from
the same numbers (each joint's placement and the link's inertia written into the C++ source from
the package's model: no URDF parser in the binary), timed in one C++ program built here with
g++ -O3 against the `pin` wheel's headers and library and `cmeel-eigen`'s headers
(requirements/bench.txt).  Same states (64 random ones) for both; blocks of one pass over the
states alternate between the two sides, 2001 each; min and median ns per call over the blocks,
and the ratio generated / Pinocchio.  The rigid model on both sides: Pinocchio's armature is not
the package's rotor model (its gyroscopic terms, Siciliano et al. 2009, eq. 7.113), so rotors and
friction are left out of the comparison.
The headers hold both forward dynamics methods (``generate_header(..., forward="both")``): the
header's forward_dynamics (the method the generator chose) and each method's own function are
timed against Pinocchio's aba, and each method's operation counts printed beside its time, the
check that the count predicts the faster (``codegen/generate.py``'s docstring).
Agreement of every function with Pinocchio is checked in the binary first, on every state
(relative to the largest element of Pinocchio's result; the run fails above 1e-9).
``--build-dir DIR --build-only`` builds outside the benchmark lock (Pinocchio's headers take
minutes to compile); a later run with the same ``--build-dir`` reuses the program.
Targets (issue 29): rnea and gravity <= 0.5 x Pinocchio, mass matrix and forward dynamics <= 0.7 x;
generation of a 7-DoF robot's header under 2 s.
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robot_dynamics_ros.codegen.c_header import generate_header  # noqa: E402
from robot_dynamics_ros.codegen.generate import DIVISION_COST, cost  # noqa: E402
from robot_dynamics_ros.core import RobotModel  # noqa: E402

URDF = ROOT / "test" / "data" / "urdf" / "example-robot-data"
ROBOTS = {"puma560": ("puma560", None), "panda": ("panda", None),
          "ur5": (URDF / "ur5_robot.urdf", "tool0"), "xarm7": (URDF / "xarm7.urdf", None)}
TARGETS = {"rnea": 0.5, "gravity": 0.5, "mass_matrix": 0.7, "forward_dynamics": 0.7}
DEFINES = ["-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
           "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12",
           "-DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION"]
STATES = 64


def load(key: str) -> RobotModel:
    source, tip = ROBOTS[key]
    if tip is None and not isinstance(source, Path):
        return RobotModel.named(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(source, tip_link=tip)


def pinocchio_prefix() -> Path | None:
    """Return the cmeel prefix holding Pinocchio's and Eigen's headers, or None."""
    prefix = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix"
    needed = [prefix / "include" / "pinocchio" / "algorithm" / "aba.hpp",
              prefix / "include" / "eigen3" / "Eigen" / "Core"]
    return prefix if all(p.is_file() for p in needed) else None


def numbers(values) -> str:
    return ", ".join(repr(float(v)) for v in np.ravel(values))


def pinocchio_builder(key: str, model) -> str:
    """
    Return C++ building ``model``'s rigid chain as a pinocchio::Model.

    Joint i's placement in its parent is the model's T_{i-1,i} at q = 0, [Rx(alpha_{i-1})
    Rz(theta0_i), p_{i-1,i}] (model.Chain; the base pose folded into the first), a revolute or
    prismatic joint about z, the link's inertia about its centre of mass in that frame.
    """
    ch = model.chain
    lines = [f"static pinocchio::Model build_{key}() {{",
             "    pinocchio::Model m; pinocchio::JointIndex parent = 0;",
             "    Eigen::Matrix3d R, I; Eigen::Vector3d p, c;"]
    for i in range(model.n):
        ca, sa = math.cos(ch.alpha_prev[i]), math.sin(ch.alpha_prev[i])
        ct, st = math.cos(ch.theta0[i]), math.sin(ch.theta0[i])
        R = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]]) @ \
            np.array([[ct, -st, 0], [st, ct, 0], [0, 0, 1]])
        p = np.array(ch.p_prev[i], dtype=float)
        if i == 0:
            R, p = ch.base[:3, :3] @ R, ch.base[:3, :3] @ p + ch.base[:3, 3]
        joint = "JointModelPZ" if ch.prismatic[i] else "JointModelRZ"
        lines += [f"    R << {numbers(R)}; p << {numbers(p)};",
                  f"    parent = m.addJoint(parent, pinocchio::{joint}(), pinocchio::SE3(R, p), "
                  f'"j{i}");',
                  f"    c << {numbers(ch.com[i])}; I << {numbers(ch.inertia[i])};",
                  f"    m.appendBodyToJoint(parent, pinocchio::Inertia({float(ch.mass[i])!r}, "
                  "c, I), pinocchio::SE3::Identity());"]
    lines += [f"    m.gravity = pinocchio::Motion(Eigen::Vector3d({numbers(model.gravity)}), "
              "Eigen::Vector3d::Zero());", "    return m;", "}"]
    return "\n".join(lines)


def states(key: str, model, rng) -> str:
    """Return C++ arrays of the STATES random (q, qd, qdd, tau) rows of ``key``."""
    low = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    high = np.where(np.isfinite(model.upper), model.upper, np.pi)
    arrays = {"q": rng.uniform(low, high, (STATES, model.n)),
              "qd": rng.uniform(-2, 2, (STATES, model.n)),
              "qdd": rng.uniform(-3, 3, (STATES, model.n)),
              "tau": rng.uniform(-20, 20, (STATES, model.n))}
    return "\n".join(f"static const double {key}_{name}[] = {{{numbers(values)}}};"
                     for name, values in arrays.items())


def robot_case(key: str, with_pinocchio: bool) -> str:
    model = f"build_{key}()" if with_pinocchio else "0"
    return (f"    run_robot<{key.upper()}_DOF>(\"{key}\", {model}, {key}_q, {key}_qd, {key}_qdd, "
            f"{key}_tau, {{{key}_rnea, {key}_gravity_torques, {key}_mass_matrix, "
            f"{key}_forward_dynamics, {key}_forward_dynamics_aba, {key}_forward_dynamics_ldlt}}, "
            "reps, blocks);")


def build(directory: Path, keys, prefix: Path | None) -> tuple[Path, dict, dict]:
    """
    Write the headers and the C++ program; compile it; return it, generation times and counts.

    The headers have both forward dynamics methods (``forward="both"``); the counts: robot ->
    the header's (forward_method, forward_counts).
    """
    rng = np.random.default_rng(0)
    parts, generation, counts = [], {}, {}
    for key in keys:
        model = load(key)
        start = time.perf_counter()
        generate_header(model, "cpp", key)                    # the full model (rotors, friction)
        generation[key] = (model.n, time.perf_counter() - start)
        rigid = model.rigid()
        header = generate_header(rigid, "cpp", key, forward="both")
        counts[key] = (header.forward_method, header.forward_counts)
        (directory / f"{key}.hpp").write_text(header.source)
        parts += [f'#include "{key}.hpp"', states(key, rigid, rng)]
        if prefix is not None:
            parts.append(pinocchio_builder(key, rigid))
    main = (Path(__file__).with_name("bench_codegen_cpp_main.cpp").read_text()
            .replace("// @ROBOTS@", "\n".join(parts))
            .replace("// @CASES@", "\n".join(robot_case(k, prefix is not None) for k in keys)))
    source, binary = directory / "bench.cpp", directory / "bench"
    if binary.is_file() and source.is_file() and source.read_text() == main:
        return binary, generation, counts           # built before from the same text
    source.write_text(main)
    command = ["g++", "-O3", "-DNDEBUG", "-std=c++17", f"-I{directory}", str(source),
               "-o", str(binary)]
    if prefix is not None:
        command += ["-DWITH_PINOCCHIO", *DEFINES, f"-I{prefix}/include",
                    f"-I{prefix}/include/eigen3", f"-L{prefix}/lib", "-lpinocchio_default",
                    f"-Wl,-rpath,{prefix}/lib"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"cannot build the benchmark:\n{run.stderr[-3000:]}")
    return binary, generation, counts


def report(rows: list[dict], generation: dict, counts: dict) -> int:
    print(f"{'robot':<8} {'function':<17} {'generated ns':>17} {'Pinocchio ns':>17} "
          f"{'ratio min/med':>14} {'target':>6} {'agreement':>10}")
    missed = 0
    for row in rows:
        gen, pin = row["generated"], row["pinocchio"]
        r_min, r_med = gen[0] / pin[0], gen[1] / pin[1]
        target = TARGETS.get(row["function"])        # (none for each method's own row)
        ok = target is None or max(r_min, r_med) <= target
        missed += not ok
        function = row["function"].replace("forward_dynamics_", "  by ")
        print(f"{row['robot']:<8} {function:<17} {gen[0]:>8.0f} /{gen[1]:>7.0f} "
              f"{pin[0]:>8.0f} /{pin[1]:>7.0f} {r_min:>6.2f} /{r_med:>5.2f} "
              f"{'-' if target is None else target:>6} "
              f"{row['error']:>10.1e}{'' if ok else '  (target missed)'}")
    print("forward dynamics' methods (operation counts of the rigid model; cost = mul + add + "
          f"{DIVISION_COST} x div; the cheaper is the header's forward_dynamics):")
    for key, (chosen, by_method) in counts.items():
        timed = {row["function"][-4:].lstrip("_"): row["generated"][0] for row in rows
                 if row["robot"] == key and row["function"].startswith("forward_dynamics_")}
        text = "; ".join(f"{m} {c} cost {cost(c):.0f}, {timed.get(m, math.nan):.0f} ns"
                         for m, c in by_method.items())
        print(f"  {key:<8} {text} -> {chosen}")
    for key, (n, seconds) in generation.items():
        print(f"generation of {key}'s header ({n} joints, rotors and friction): "
              f"{seconds:.2f} s (target < 2 s for 7 joints)")
    bad = [row for row in rows if row["error"] > 1e-9]
    for row in bad:
        print(f"DISAGREEMENT {row['robot']} {row['function']}: {row['error']:.3g}")
    print(f"{missed} of {sum(row['function'] in TARGETS for row in rows)} ratios above their "
          "target")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--quick", action="store_true",
                        help="the Puma 560's generated side alone, few repetitions: a check "
                             "that the benchmark works (Pinocchio's headers take minutes to "
                             "compile)")
    parser.add_argument("--build-dir", type=Path,
                        help="build there and keep the program (reused while its text is the "
                             "same), e.g. to build outside the benchmark lock")
    parser.add_argument("--build-only", action="store_true", help="build, do not run")
    args = parser.parse_args()
    prefix = None if args.quick else pinocchio_prefix()
    if prefix is None and not args.quick:
        print("skipped: Pinocchio's C++ headers (pin) or Eigen's (cmeel-eigen) are not installed "
              "(requirements/bench.txt)")
        return 0
    keys = ["puma560"] if args.quick else list(ROBOTS)
    # blocks of one pass over the states (tens to hundreds of microseconds, shorter than a
    # scheduler's time slice): on a shared machine the min of either side is then an undisturbed
    # pass, whatever the per-call time (longer blocks favour the faster side's min)
    reps, blocks = (1, 51) if args.quick else (1, 2001)
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.build_dir or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        binary, generation, counts = build(directory, keys, prefix)
        if args.build_only:
            print(f"built {binary}")
            return 0
        run = subprocess.run([str(binary), str(reps), str(blocks)], capture_output=True,
                             text=True, timeout=600)
    if run.returncode != 0:
        print(run.stdout, run.stderr)
        return 1
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    print(f"{STATES} states, {reps} calls per state and block, {blocks} blocks alternating "
          "generated / Pinocchio; ns per call (min / median over blocks)")
    if args.quick:
        for row in rows:
            print(f"{row['robot']:<8} {row['function']:<17} generated {row['generated'][0]:.0f} / "
                  f"{row['generated'][1]:.0f} ns (quick: Pinocchio's side not built)")
        return 0 if len(rows) == 6 else 1
    return report(rows, generation, counts)


if __name__ == "__main__":
    sys.exit(main())
