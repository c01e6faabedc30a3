"""
Print how far each corpus description's dynamics are from Pinocchio's (doc/urdf.md's table).

    .venv/bin/python tools/corpus_err.py [NAME ...]      (default: the whole corpus)

For each description of test/data/urdf (``test/support/urdf_corpus.py``), expanded with xacro
as the tests do, the largest relative error (to max(1, |Pinocchio's value|)) over four random
states of rnea, gravity, mass matrix, Coriolis matrix, tool pose, Jacobian and forward dynamics,
the quantities ``test_urdf_corpus.assert_agrees`` holds to 1e-11; and the largest joint offset
|p_prev| of the model (axes_to_dh.py keeps it within the robot).  Needs the test requirements
(Pinocchio, xacro).
"""
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "test" / "support"), str(ROOT / "test" / "core" / "model")]


def main(names) -> int:
    import test_urdf_corpus
    from urdf_corpus import CORPUS, ament_prefix, expanded
    prefix = ament_prefix(Path(tempfile.mkdtemp()))
    os.environ["AMENT_PREFIX_PATH"] = prefix
    test_urdf_corpus.TOLERANCE = np.inf             # measure, do not assert
    for entry in CORPUS:
        if names and entry.name not in names:
            continue
        text = expanded(entry, prefix)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = test_urdf_corpus.RobotModel.from_urdf(text, tip_link=entry.tip)
        worst = test_urdf_corpus.assert_agrees(model, text, np.random.default_rng(1), count=4)
        print(f"{entry.name:22s} max|p|={np.abs(model.chain.p_prev).max():9.3g} "
              f"worst={max(worst.values()):.1e} "
              + " ".join(f"{name}={error:.1e}" for name, error in worst.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
