"""
Make the pictures of README.md and doc/ again, each with its documented command.

    .venv/bin/python tools/doc_images.py [NAME ...]      (default: all; names as below)

Each picture in doc/images/ comes from one command of the package or one benchmark (the list
below, also in doc/images/README.md); this runs the command and stores the PNG with an 8-bit
palette, so that each is a few tens of KB.  The benchmark pictures (closed_loop,
formulations_time) carry timing figures: make them under ``flock /work/bench.lock`` on a quiet
machine and update the figures in the pages from the same run.
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "doc" / "images"
PY = sys.executable
CLI = [PY, "-m", "robot_dynamics_ros.commands.cli"]

# name -> command (run from the repository root; {out} is the PNG, {tmp} a scratch directory)
COMMANDS = {
    "scaling": CLI + ["scale", "puma560", "config/trajectories/puma560_path.yaml",
                      "--method", "time_optimal", "--plot", "{out}"],
    "ellipsoid": CLI + ["ellipsoid", "planar2", "--q", "0.3", "0.9", "--torque-limits",
                        "--plot", "{out}"],
    "demo_tracking": CLI + ["demo", "--bag", "{tmp}/demo_bag", "--plot", "{out}"],
    "identification_fit": [PY, "doc/identification_example.py", "{tmp}/identification"],
    "closed_loop": [PY, "bench/bench_closed_loop.py", "--plot", "{out}"],
    "formulations_time": [PY, "bench/bench_formulations.py"],
}
# Where a command writes its picture itself (relative to {tmp} or the repository).
PRODUCED = {
    "identification_fit": "{tmp}/identification/puma560_identified.png",
    "formulations_time": str(IMAGES / "formulations_time.png"),
}


def shrink(path: Path) -> None:
    """Store ``path`` as an 8-bit palette PNG (plots have few colours: no visible change)."""
    from PIL import Image
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def make(name: str) -> Path:
    out = IMAGES / f"{name}.png"
    with tempfile.TemporaryDirectory(prefix=f"doc-image-{name}-") as tmp:
        argv = [a.format(out=out, tmp=tmp) for a in COMMANDS[name]]
        print("$", " ".join(str(a) for a in argv), flush=True)
        env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", MPLBACKEND="Agg")
        subprocess.run(argv, cwd=ROOT, env=env, check=True)
        produced = Path(PRODUCED.get(name, str(out)).format(tmp=tmp))
        if produced != out:
            out.write_bytes(produced.read_bytes())
    shrink(out)
    print(f"{out.relative_to(ROOT)}: {out.stat().st_size / 1024:.0f} KB", flush=True)
    return out


def main(argv=None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(COMMANDS)
    unknown = sorted(set(names) - set(COMMANDS))
    if unknown:
        print(f"unknown picture(s) {unknown}; known: {sorted(COMMANDS)}", file=sys.stderr)
        return 2
    for name in names:
        make(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
