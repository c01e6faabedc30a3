"""ament_python package robot_dynamics_ros; also installs with `pip install .` into a venv."""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "robot_dynamics_ros"

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
    python_requires=">=3.10",
    # Run-time Python requirements (pinned in requirements/base.txt, declared in package.xml).
    install_requires=["numpy", "scipy", "PyYAML", "matplotlib", "tqdm", "rosbags", "cvxpy",
                      "numba", "setuptools"],
    extras_require={"bench": ["pin", "roboticstoolbox-python", "toppra"]},
    zip_safe=True,
    maintainer="robot_dynamics_ros developers",
    maintainer_email="dev@robot-dynamics-ros.invalid",
    description="Manipulator dynamics for ROS 2 from a URDF (RNEA, gravity compensation, mass "
                "matrix, torque-limited trajectory scaling)",
    license="Apache-2.0",
    tests_require=["pytest"],
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
