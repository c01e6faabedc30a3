"""
Cost of the source texts' formulations: operation counts and time per call against n.

    .venv/bin/python bench/bench_formulations.py [--quick] [--no-write]

(--quick: n = 2..4, short loops, prints only; the full run rewrites the docs table and plot.)

For n = 2..12 (chains of revolute joints with random, generic parameters, standard DH; see
test/support/random_robots.py) every formulation of ``robot_dynamics_ros.core.formulations`` is

* counted: run once on counting scalars (``formulations.opcount``): multiplications and
  additions/subtractions whose operands depend on the joint state, constants folded;
* timed: seconds per ``inverse_dynamics`` call (float numpy), minimum over repeats, and as a ratio
  to the package's ``rnea`` on the same rigid robot, timed in the same run.

Printed next to the texts' own formulas: Milićević et al., Table 3 (FGL: L-E, N-E, G-D), Turney
et al. 1980, Tables 1-4 (TML: Lagrange O(n^3), N-E 108n-12, modified N-E 90n-27), Asada & Slotine
1986 (Luh-Walker-Paul: 852
multiplications at n = 6), Renaud 1987 (Renaud: 181/127 for his customised 6R; counted here on
config/robots/renaud6r.yaml, his geometry, and next to it the code generator's count,
``robot-dynamics codegen``).  Writes doc/formulation_counts.md (the tables) and
doc/images/formulations_time.png (time against n), unless --no-write or --quick.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import timeit
from fractions import Fraction as F
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test" / "support"))

from random_robots import random_robot_dict, random_state  # noqa: E402
from robot_dynamics_ros.core import RobotModel, rnea  # noqa: E402
from robot_dynamics_ros.core.formulations import FORMULATIONS, count_operations  # noqa: E402

LABELS = {
    "lagrange_euler": "Lagrange-Euler 4x4 (Milićević et al., eqs. 2.1-2.15)",
    "newton_euler_base": "N-E, base coordinates (Milićević et al., Table 1)",
    "newton_euler_link": "N-E, link coordinates (Milićević et al., Table 2 / LWP)",
    "modified_newton_euler": "modified N-E (TML, Turney et al. 1980, Sect. 5)",
    "dalembert": "generalized d'Alembert (Milićević et al., Sect. 4)",
    "renaud": "Renaud augmented bodies (Renaud 1987)",
}


def _poly(*coeffs):
    """Return n -> sum c_k n^k for coefficients from the highest power down (exact fractions)."""
    return lambda n: int(sum(F(c) * n ** (len(coeffs) - 1 - k) for k, c in enumerate(coeffs)))


# (source, formula text, mults(n), adds(n)); the texts' own operation counts.
SEED_COUNTS = {
    "lagrange_euler": [
        ("Milićević et al., Table 3 (FGL)", "128/3 n^4 + 512/3 n^3 + 739/3 n^2 + 160/3 n",
         _poly(F(128, 3), F(512, 3), F(739, 3), F(160, 3), 0),
         _poly(F(98, 3), F(781, 6), F(559, 3), F(245, 6), 0)),
        ("Turney et al. 1980, Table 1 (TML O(n^3))", "27/2 n^3 + 165/2 n^2 + 5n",
         _poly(F(27, 2), F(165, 2), 5, 0), _poly(F(40, 3), 58, F(-64, 3), 0)),
    ],
    "newton_euler_link": [
        ("Milićević et al., Table 3 (FGL N-E)", "132 n", _poly(132, 0), _poly(111, -4)),
        ("Turney et al. 1980, Table 1 (TML N-E)", "108 n - 12", _poly(108, -12), _poly(100, -9)),
        ("Asada & Slotine 1986 (LWP, Hollerbach)", "150 n - 48", _poly(150, -48), None),
    ],
    "modified_newton_euler": [
        ("Turney et al. 1980, Table 1 (TML mod. N-E)", "90 n - 27", _poly(90, -27),
         _poly(88, -24)),
    ],
    "dalembert": [
        ("Milićević et al., Table 3 (FGL G-D)", "13/6 n^3 + 105/2 n^2 + 268/3 n + 69",
         _poly(F(13, 6), F(105, 2), F(268, 3), 69), _poly(F(4, 3), 44, F(146, 3), 45)),
    ],
    "newton_euler_base": [],
    "renaud": [],
}
RENAUD_6R_SEED = (181, 127)          # Renaud 1987, example (164/115 after grouping y5 - z6)


def best_time(fn, budget: float = 0.2) -> float:
    """Seconds per call: minimum over 3 repeats of a loop sized to about ``budget`` seconds."""
    once = min(timeit.repeat(fn, number=1, repeat=2))
    number = max(1, int(budget / 3 / max(once, 1e-7)))
    return min(timeit.repeat(fn, number=number, repeat=3)) / number


def measure(ns, budget: float):
    rng = np.random.default_rng(2024)
    rows = []
    for n in ns:
        model = RobotModel.from_dict(random_robot_dict(n, rng, "standard", prismatic_prob=0.0))
        rigid = model.rigid()
        q, qd, qdd = random_state(model, rng)
        reference = rnea(rigid, q, qd, qdd)
        t_rnea = best_time(lambda: rnea(rigid, q, qd, qdd), budget)
        row = {"n": n, "rnea_us": t_rnea * 1e6, "counts": {}, "time_us": {}}
        for name, module in FORMULATIONS.items():
            tally, tau = count_operations(module, model, q, qd, qdd)
            err = np.abs(tau - reference).max() / max(np.abs(reference).max(), 1e-300)
            if err > 1e-10:
                raise AssertionError(f"{name} disagrees with rnea at n={n}: relative error "
                                     f"{err:.2e}")
            row["counts"][name] = (tally.mul, tally.add)
            row["time_us"][name] = best_time(lambda: module.inverse_dynamics(model, q, qd, qdd),
                                             budget) * 1e6
        rows.append(row)
        print(f"n={n:2d}  rnea {t_rnea * 1e6:8.1f} us  " + "  ".join(
            f"{k[:10]} {row['counts'][k][0]}/{row['counts'][k][1]} {row['time_us'][k]:.0f}us"
            for k in FORMULATIONS), flush=True)
    return rows


def renaud_6r_counts():
    model = RobotModel.named("renaud6r")
    rng = np.random.default_rng(6)
    tally, _ = count_operations(FORMULATIONS["renaud"], model, *random_state(model, rng))
    return tally.mul, tally.add


def generated_6r_counts() -> dict:
    """
    Return the rnea counts of the generated code (robot-dynamics codegen) for Renaud's 6R.

    Counted for the shipped numbers, and for generic values in his zero pattern
    (test/codegen/test_renaud.py, renaud6r_generic), where no equality of moments can fold an
    operation, as in his symbolic count.
    """
    sys.path.insert(0, str(ROOT / "test" / "codegen"))
    from test_renaud import renaud6r_generic
    from robot_dynamics_ros.codegen import generate
    out = {}
    for label, model in (("generic", renaud6r_generic()),
                         ("shipped", RobotModel.named("renaud6r"))):
        for grouping in ("augmented", "full"):
            c = generate(model, grouping).counts["rnea"]
            out[label, grouping] = f"{c.multiplications} / {c.additions}"
    return out


def mixed_chain_counts(n: int = 6):
    """Count operations on a generic chain with prismatic joints 2 and 5 (G-D does not apply)."""
    rng = np.random.default_rng(7)
    d = random_robot_dict(n, rng, "standard", prismatic_prob=0.0)
    for i in (1, 4):
        d["joints"][i]["type"] = "prismatic"
        d["joints"][i]["limits"] = {"lower": -0.5, "upper": 0.5, "velocity": 1.0, "effort": 500.0}
    model = RobotModel.from_dict(d)
    state = random_state(model, rng)
    return {name: count_operations(module, model, *state)[0]
            for name, module in FORMULATIONS.items() if name != "dalembert"}


def markdown(rows, renaud6r, mixed, generated) -> str:
    at6 = next((r for r in rows if r["n"] == 6), rows[-1])
    n6 = at6["n"]
    out = [
        "# The source texts' inverse-dynamics formulations side by side",
        "",
        "Generated by `bench/bench_formulations.py`; do not edit by hand.",
        "",
        "Six formulations from the source texts (see references.md) live in "
        "`robot_dynamics_ros.core.formulations`, "
        "one module",
        "each, every one with `inverse_dynamics(model, q, qd, qdd, gravity=None, f_ext=None)` "
        "(rigid",
        "body: equal to `rnea(model.rigid(), ...)` to 1e-10; "
        "tested in `test/core/formulations/test_formulations.py`):",
        "",
        "| module | formulation | frames | joints |",
        "|---|---|---|---|",
        "| `lagrange_euler` | Lagrange-Euler, 4x4 U_ij, U_ijk, pseudo-inertia J_i "
        "(Milićević et al., eqs. 2.1-2.15, Turney et al. 1980, Sect. 2); also D, h_ikm, h, c "
        "| standard DH | R, P |",
        "| `newton_euler_base` | Newton-Euler in base coordinates (Milićević et al., Table 1; "
        "Siciliano et al. 2009, eqs. 7.93-7.106) | standard DH | R, P |",
        "| `newton_euler_link` | Newton-Euler in link coordinates (Milićević et al., Table 2 "
        "= Luh-Walker-Paul; "
        "Siciliano et al. 2009, eqs. 7.107-7.114) | standard DH | R, P |",
        "| `modified_newton_euler` | Turney-Mudge-Lee modified N-E, A_i and K_i "
        "(Turney et al. 1980, eqs. 5.1-5.2) | standard DH | R, P (P: our extension) |",
        "| `dalembert` | generalized d'Alembert (Milićević et al., eqs. 4.1-4.5); "
        "D also | standard DH | R only (ValueError for P) |",
        "| `renaud` | Renaud's augmented bodies, steps (0)-(10) (Renaud 1987) | modified DH "
        "| R, P |",
        "",
        "Models in the other DH convention are converted exactly: "
        "a modified-DH model gets standard",
        "frames S_i = F_i Tx(a_i) Rx(alpha_i) (next row's a, alpha; "
        "the first row's offset goes into",
        "the base), and Renaud uses `model.chain`, the model's internal modified-DH chain, "
        "which is that",
        "conversion for standard-DH files.  Rotor inertia and friction are ignored "
        "(the main `rnea`",
        "handles them).",
        "",
        "## Operation counts",
        "",
        "Counted by running each formulation once on a counting scalar "
        "(`formulations/opcount.py`):",
        "every multiplication and addition/subtraction whose operands depend on (q, qd, qdd); "
        "robot",
        "constants are precomputed, and multiplications by exact 0 or +-1 and additions of 0 are "
        "folded",
        "away (so structural zeros such as z0 = (0,0,1) or the last row of a 4x4 matrix "
        "are free).",
        "Sines and cosines are not counted (n of each).  Robots: "
        "chains of revolute joints with random",
        "generic DH parameters and full inertia tensors (the texts' general-robot setting), "
        "free motion,",
        "gravity along a generic direction.  "
        "Our counts are those of straightforward code with constant",
        "folding, not of hand-optimised or symbolically customised code.",
        "",
        f"### At n = {n6}",
        "",
        "| formulation | ours: mults / adds | seed formula (mults) | seed at n = 6: "
        "mults / adds | source |",
        "|---|---|---|---|---|",
    ]
    for name in FORMULATIONS:
        mul, add = at6["counts"][name]
        seeds = SEED_COUNTS[name]
        if name == "renaud":
            out.append(f"| {LABELS[name]} | {mul} / {add} "
                       f"(on his 6R, `renaud6r`: {renaud6r[0]} / {renaud6r[1]})"
                       f" | customised 6R only | {RENAUD_6R_SEED[0]} / {RENAUD_6R_SEED[1]}"
                       " (164 / 115 regrouped) | Renaud 1987, example |")
        elif not seeds:
            out.append(f"| {LABELS[name]} | {mul} / {add} | none given | - | - |")
        for k, (source, text, fm, fa) in enumerate(seeds):
            left = f"| {LABELS[name]} | {mul} / {add}" if k == 0 else "| | "
            adds = "-" if fa is None else str(fa(n6))
            out.append(f"{left} | {text} | {fm(n6)} / {adds} | {source} |")
    out += [
        "",
        "Why ours and the texts' counts differ:",
        "",
        "* L-E: FGL's count (Milićević et al., Table 3) evaluates eqs. 2.11-2.15 term by term, "
        "re-forming the",
        "  derivative matrices for every torque element (Turney et al. 1980, Sect. 2); "
        "ours forms each U_ij and U_ijk once,",
        "  takes Tr(U_jkm J_j U_ji^T) as an elementwise product with U_ji J_j, "
        "and gets the zero last",
        "  rows of the 4x4 matrices free.  It still computes every h_ikm "
        "(no use of h_ikm = h_imk),",
        "  which is why it stays above TML's O(n^3) scheme (Turney et al. 1980, Table 2) and "
        "grows as n^4.",
        "* N-E (link coordinates) and TML: the texts' tables do not list forming the rotation "
        "matrices;",
        "  ours counts the products sin(theta) cos(alpha) etc. (4 per joint).  "
        "TML's 6n for Tr{A_i K_i sigma^T} assumes",
        "  a diagonal K_i (their Sect. 5), "
        "ours forms the six needed entries of A_i K_i for a full K_i",
        "  (18 multiplications).  The base-frame form pays for rotating the inertias, "
        "I_i = R I R^T.",
        "* G-D: close to FGL's cubic formula.",
        "* Renaud: 181 / 127 is his symbolically customised 6R "
        "(all parameters of that geometry that",
        "  vanish are dropped, sub-expressions named once); counted on his geometry (`renaud6r`, "
        "where",
        f"  constant folding drops the same zeros) our generic code needs {renaud6r[0]} / "
        f"{renaud6r[1]}.",
        "  His method itself is `robot-dynamics codegen` (straight-line code, "
        "every sub-expression",
        "  named once).  On his 6R with generic values in his zero pattern it needs"
        f" {generated['generic', 'augmented']}",
        f"  with his augmented bodies (his 181 / 127) and {generated['generic', 'full']} with the"
        " regrouping that generalises",
        "  his y5 - z6 (his 164 / 115).  The shipped `renaud6r` numbers have bodies with equal "
        "moments",
        f"  (I_xx = I_yy), which fold further: {generated['shipped', 'augmented']} and"
        f" {generated['shipped', 'full']}.",
        "",
        "All N-E variants are linear in n, G-D cubic and L-E quartic, "
        "as Milićević et al., Table 3 and Turney et al. 1980, Table 1",
        "say (checked in `test/core/formulations/test_formulations.py` from the differences",
        "of the counts).",
        "",
        "With prismatic joints (n = 6, joints 2 and 5 prismatic, otherwise as above):",
        "",
        "| formulation | mults / adds |",
        "|---|---|",
    ]
    out += [f"| {LABELS[name]} | {c.mul} / {c.add} |" for name, c in mixed.items()]
    out += ["", "### Against n (ours; the texts' formula in brackets where they give one)", "",
            "| n | " + " | ".join(FORMULATIONS) + " |", "|---" * (len(FORMULATIONS) + 1) + "|"]
    for r in rows:
        cells = []
        for name in FORMULATIONS:
            mul, add = r["counts"][name]
            seeds = SEED_COUNTS[name]
            cell = f"{mul} / {add}"
            if seeds:
                s = seeds[0] if name != "newton_euler_link" else seeds[1]
                cell += f" [{s[2](r['n'])} / {s[3](r['n'])}]"
            cells.append(cell)
        out.append(f"| {r['n']} | " + " | ".join(cells) + " |")
    out += ["", "Brackets: L-E FGL (Milićević et al., Table 3), N-E link TML 108n-12 / 100n-9, "
            "modified N-E TML",
            "90n-27 / 88n-24, G-D FGL (Milićević et al., Table 3).", "",
            "## Time per call", "",
            "Microseconds per `inverse_dynamics` call (one configuration, float numpy, "
            "including input",
            "checks), minimum over repeats, with the ratio to the package's `rnea` on the same "
            "rigid robot",
            "timed in the same run.  These reference implementations favour readability "
            "(numpy 3-vectors",
            "and 4x4 matrices); `rnea` is the production algorithm.  Plot: "
            "`doc/images/formulations_time.png`.",
            "",
            "| n | rnea (us) | " + " | ".join(FORMULATIONS) + " |",
            "|---" * (len(FORMULATIONS) + 2) + "|"]
    for r in rows:
        cells = [f"{r['time_us'][k]:.0f} ({r['time_us'][k] / r['rnea_us']:.0f}x)"
                 for k in FORMULATIONS]
        out.append(f"| {r['n']} | {r['rnea_us']:.1f} | " + " | ".join(cells) + " |")
    out += ["", "Time ratios, not absolute times, are comparable between machines.", ""]
    return "\n".join(out)


def plot(rows, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ns = [r["n"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in FORMULATIONS:
        ax.plot(ns, [r["time_us"][name] for r in rows], marker="o", label=name)
    ax.plot(ns, [r["rnea_us"] for r in rows], marker="s", color="k", label="rnea (package)")
    ax.set_yscale("log")
    ax.set_xlabel("number of joints n")
    ax.set_ylabel("time per inverse-dynamics call (us)")
    ax.set_title("Seed formulations: time against n (random revolute chains)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="n = 2..4 and short timing loops; writes no files")
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    ns = range(2, 5) if args.quick else range(2, 13)
    load_before = os.getloadavg()[0]
    rows = measure(ns, budget=0.01 if args.quick else 0.3)
    text = markdown(rows, renaud_6r_counts(), mixed_chain_counts(), generated_6r_counts())
    text += (f"\nTimes measured {time.strftime('%Y-%m-%d')} by `flock /work/bench.lock "
             f".venv/bin/python bench/bench_formulations.py` on {os.cpu_count()} cores, load "
             f"average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after.\n")
    print(text)
    if not (args.no_write or args.quick):  # a quick run must not replace the full table
        (ROOT / "doc" / "formulation_counts.md").write_text(text)
        plot(rows, ROOT / "doc" / "images" / "formulations_time.png")
        print("wrote doc/formulation_counts.md and doc/images/formulations_time.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
