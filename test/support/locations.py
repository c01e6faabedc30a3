"""Where the tests find the repository's files: its root, the shipped configuration, test data."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "test" / "data"
CONFIG = REPO / "config"
PUMA_PATH = CONFIG / "trajectories" / "puma560_path.yaml"
EX72 = CONFIG / "trajectories" / "planar2_example72_trajectory1.yaml"
