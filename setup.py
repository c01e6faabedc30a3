"""
ament_python package robot_dynamics_ros; also installs with `pip install .` into a venv.

No install compiles on a user's first call (doc/getting_started.md, "Caches and first start"):

* ``colcon build`` (``setup.py install``, and ``develop`` for ``--symlink-install``) ends by
  compiling the kernels into the user's cache for this machine's CPU (``robot-dynamics
  compile``, run on the installed package).
* A wheel (``pip install``, ``pip wheel``, a ``--root`` staging install of a distribution
  package) runs no code where it is installed, and may be installed on another machine than the
  one that built it: its build (``build_py``) compiles the dynamics kernels and the scaling's
  passes into the package as extensions for any CPU of the architecture (``core.precompile.ship``,
  numba.pycc; pyproject.toml's build requirements bring numba), which an installed package loads
  without numba.  ``robot-dynamics compile`` later builds the host-tuned ones into the cache.
"""
import os
import subprocess
import sys
from glob import glob

from setuptools import Distribution, find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.develop import develop
from setuptools.command.install import install

PACKAGE = "robot_dynamics_ros"
COMPILE = ("import sys; from robot_dynamics_ros.commands.cli import main; "
           "sys.exit(main(['compile', '--quiet']))")
SHIP = ("import sys; from robot_dynamics_ros.core.precompile import ship; lines = ship(); "
        "print(*(f'robot_dynamics_ros: {line}' for line in lines), sep=chr(10)); "
        "sys.exit(0 if all(': built: ' in line for line in lines) else 1)")


def compile_kernels(where: str) -> None:
    """Run ``robot-dynamics compile`` on the package installed in ``where``; never fails."""
    _run_on_package(
        where, COMPILE, "compiling the kernels into the user's cache (robot-dynamics compile; "
        "a few minutes the first time)", "the kernels were not compiled; run `robot-dynamics "
        "compile` once, else the first configure of a node compiles them")


def ship_kernels(build_lib: str) -> None:
    """Build the kernels' extensions into the package in ``build_lib``; never fails."""
    _run_on_package(
        build_lib, SHIP, "compiling the kernels into the package (numba.pycc, any CPU of this "
        "architecture; a minute or two)", "the package holds no compiled kernels; run "
        "`robot-dynamics compile` once after installing it")


def _run_on_package(where: str, code: str, doing: str, failed_means: str) -> None:
    """Run ``code`` in a Python process on the package in ``where``; warn if it fails."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        p for p in (where, environment.get("PYTHONPATH")) if p)
    print(f"{PACKAGE}: {doing}", flush=True)
    try:
        # (in ``where``: a ``-c`` process puts its working directory first on its path, and
        # colcon runs this in the source folder, whose files are not the installed ones)
        done = subprocess.run([sys.executable, "-c", code], env=environment, cwd=where,
                              timeout=3600)
        failed = done.returncode != 0
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"{PACKAGE}: {exc}", flush=True)
        failed = True
    if failed:
        print(f"{PACKAGE}: WARNING: {failed_means}", flush=True)


def _installs_here(distribution) -> bool:
    """Return whether this run installs into its final place (then the install hook compiles)."""
    commands = distribution.commands
    return "develop" in commands or (
        "install" in commands and not distribution.get_command_obj("install").root)


class BuildPyShipping(build_py):
    """``build_py``, then (a wheel, a staged install) the kernels compiled into the package."""

    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False) and not _installs_here(self.distribution):
            ship_kernels(os.path.abspath(self.build_lib))


class WheelWithKernels(Distribution):
    """A wheel holds the kernels' extensions: its tag names the Python and the platform."""

    def has_ext_modules(self):
        return "bdist_wheel" in (self.commands or ()) or super().has_ext_modules()


class InstallCompiling(install):
    """``setup.py install`` (colcon build), then the kernels compiled (not in a staging root)."""

    def run(self):
        super().run()
        if not self.root:           # (bdist_wheel and packagers stage into a root: not here)
            compile_kernels(os.path.abspath(self.install_lib))


class DevelopCompiling(develop):
    """``setup.py develop`` (``colcon build --symlink-install``), then the kernels compiled."""

    def run(self):
        super().run()
        if not self.uninstall:
            compile_kernels(os.path.abspath(os.path.join(self.install_dir, self.egg_path)))


setup(
    name=PACKAGE,
    version="0.2.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    # the nodes' parameter tables (nodes/params/*.yaml), read at run time
    package_data={f"{PACKAGE}.nodes": ["params/*.yaml"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/config/robots", glob("config/robots/*.yaml")),
        (f"share/{PACKAGE}/config/trajectories", glob("config/trajectories/*.yaml")),
    ],
    python_requires=">=3.11",         # numpy 2.4 (requirements/base.txt) and the ROS wheels
    cmdclass={"install": InstallCompiling, "develop": DevelopCompiling,
              "build_py": BuildPyShipping},
    distclass=WheelWithKernels,
    # Run-time Python requirements (pinned in requirements/base.txt, declared in package.xml;
    # test/test_package_xml.py keeps the three in step).
    install_requires=["numpy", "scipy", "PyYAML", "matplotlib", "tqdm", "rosbags", "ruamel.yaml",
                      "cvxpy", "clarabel", "highspy", "numba", "xacro", "defusedxml",
                      "distributed", "setuptools"],
    # the test extra is how ament_python packages declare pytest now (setuptools dropped
    # tests_require); the suite's own pins are requirements/test.txt
    extras_require={"bench": ["pin", "roboticstoolbox-python", "toppra"], "test": ["pytest"]},
    zip_safe=False,                   # compiled kernels are loaded from files (core/jit.py)
    maintainer="robot_dynamics_ros developers",
    maintainer_email="dev@robot-dynamics-ros.invalid",
    description="Manipulator dynamics for ROS 2 from a URDF (RNEA, gravity compensation, mass "
                "matrix, torque-limited trajectory scaling)",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "robot-dynamics = robot_dynamics_ros.commands.cli:main",
            "inverse_dynamics_node = robot_dynamics_ros.nodes.executables:main",
            "gravity_compensation_node = robot_dynamics_ros.nodes.executables:main",
            "dynamics_service_node = robot_dynamics_ros.nodes.executables:main",
            "trajectory_scaler_node = robot_dynamics_ros.nodes.executables:main",
            "trajectory_proxy_node = robot_dynamics_ros.nodes.executables:main",
            "dynamics_simulator_node = robot_dynamics_ros.nodes.executables:main",
            "external_torque_observer_node = robot_dynamics_ros.nodes.executables:main",
        ],
    },
)
