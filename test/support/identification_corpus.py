"""
The corpus of real robots' public logs for identification (test/data/identification/README.md).

Each entry turns its data set into what ``robot-dynamics identify`` reads -- bags of
sensor_msgs/JointState written by :func:`write_bags` (a training bag and a validation bag), the
robot file, and the options the data need to be read (a drive-gain file for motor currents) --
and evaluates the model the data set's authors publish with it, friction included
(``Robot.published``), so that the identified file and the published model are compared on the
same samples (:func:`compare`).

Data whose licence allows it are committed under test/data/identification (the Staubli TX40).
The others are read from a checkout of their repository under the directory named by the
environment variable ``ROBOT_DYNAMICS_CORPUS`` (``$ROBOT_DYNAMICS_CORPUS/<repository name>``);
:func:`source` says why an entry cannot be read (the tests skip with that reason: CI has no
network, and the licence does not let the data be committed).
"""
from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from locations import CONFIG, DATA
from robot_dynamics_ros.bags import write_joint_states
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.model.dh_description import robot_yaml_text
from robot_dynamics_ros.core.identification import predicted_effort
from robot_dynamics_ros.core.identification.drives import gains_from_constants
from robot_dynamics_ros.core.identification.pipeline import (IdentificationOptions, Recording,
                                                             prepare_validation)
from robot_dynamics_ros.core.identification.validation import rms

ENVIRONMENT = "ROBOT_DYNAMICS_CORPUS"
CORPUS_DIR = DATA / "identification"
TRAINING_SHARE = 0.7          # a single recording: the first 70 % trains, the rest validates


class Recordings(NamedTuple):
    """One robot's data, ready to be written as bags and compared."""

    model: RobotModel             # the starting robot file, loaded
    robot: str                    # the robot argument of robot-dynamics identify
    arguments: list               # what the data need to be read (drive gains), nothing else
    training: dict                # name -> (Recording in joint torques, efforts as recorded)
    validation: tuple             # (name, Recording, efforts as recorded)
    published: Callable           # IdentificationData -> torques of the published model


class Robot(NamedTuple):
    """One corpus entry: where its data come from and how they are read."""

    name: str
    maker: str
    sensor: str                   # "motor currents" or "joint-torque sensors"
    repository: str               # owner/name on GitHub
    commit: str
    licence: str
    committed: bool               # the data are in test/data/identification
    read: Callable                # (source directory, work directory) -> Recordings


def source(robot: Robot) -> tuple[Path | None, str]:
    """Return the directory of ``robot``'s data, or None and why it cannot be read here."""
    if robot.committed:
        return CORPUS_DIR / robot.name, ""
    root = os.environ.get(ENVIRONMENT)
    directory = Path(root) / robot.repository.split("/")[1] if root else None
    if directory is not None and directory.is_dir():
        return directory, ""
    return None, (f"{robot.name}: the data of github.com/{robot.repository} ({robot.licence}) "
                  f"cannot be committed here; set {ENVIRONMENT} to a directory holding a "
                  f"checkout of it (commit {robot.commit[:12]}) to run this")


def _split(name, t, q, qd, tau, raw):
    """Split one recording in time: the first TRAINING_SHARE trains, the rest validates."""
    cut = int(TRAINING_SHARE * t.size)
    parts = {}
    for label, rows in (("train", slice(0, cut)), ("validation", slice(cut, None))):
        time = t[rows] - t[rows][0]
        parts[label] = (Recording(f"{name}_{label}", time, q[rows],
                                  None if qd is None else qd[rows], tau[rows]), raw[rows])
    return parts


# --- Staubli TX40: motor currents, a coupled wrist (FIGAROH's example data) -----------------

TX40_RATIOS = np.array([32.0, 32.0, 45.0, -48.0, 45.0, 32.0])
TX40_OFFSETS = np.array([0.0, -np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0])   # joints 2, 3's zeros


def _tx40_published(model, config: dict):
    """
    Return the model shipped with the data: the URDF's bodies, the configuration's drives.

    Per joint a reflected rotor inertia Ia qdd, viscous and Coulomb friction fv qd + fs sgn(qd)
    and an offset, and the coupled wrist's motor 6 on joints 5 and 6 as FIGAROH's TX40 example
    models it (``_add_coupling``): joint 5 gets Iam6 qdd6 + fvm6 qd6 + fsm6 sgn(qd5 + qd6),
    joint 6 gets Iam6 qdd5 + fvm6 qd5 + fsm6 sgn(qd5 + qd6).
    """
    rigid = model.rigid()
    ia, fv, fs, offset = (np.array(config[key], dtype=float)
                          for key in ("Ia", "fv", "fs", "offset"))
    iam6, fvm6, fsm6 = (float(config[key]) for key in ("Iam6", "fvm6", "fsm6"))

    def published(d):
        tau = (rnea(rigid, d.q, d.qd, d.qdd) + ia * d.qdd + fv * d.qd + fs * np.sign(d.qd)
               + offset)
        wrist = fsm6 * np.sign(d.qd[:, 4] + d.qd[:, 5])
        tau[:, 4] += iam6 * d.qdd[:, 5] + fvm6 * d.qd[:, 5] + wrist
        tau[:, 5] += iam6 * d.qdd[:, 4] + fvm6 * d.qd[:, 4] + wrist
        return tau
    return published


def _tx40_config(path: Path) -> dict:
    text = path.read_text()
    values = {}
    for key in ("fv", "fs", "Ia", "offset", "reduction_ratio"):
        values[key] = [float(x) for x in re.search(rf"\b{key} : \[(.*?)\]", text).group(1)
                       .split(",")]
    for key in ("Iam6", "fvm6", "fsm6"):
        values[key] = float(re.search(rf"\b{key} : ([-0-9.eE+]+)", text).group(1))
    values["ts"] = float(re.search(r"\bts : ([-0-9.eE+]+)", text).group(1))
    return values


def tx40_robot_file(urdf: Path, config: dict, work: Path) -> Path:
    """
    Write the TX40's robot file: the URDF's bodies and FIGAROH's drives, with the wrist coupling.

    The coupling is FIGAROH's (``examples/staubli_TX40/utils/staubli_tx40_tools.py``:
    ``_convert_motor_to_joint_positions`` puts r6 at [5, 4] of the reduction matrix, q_m6 =
    r6 (q5 + q6); ``process_torque_data`` its transpose, tau = K^T tau_m): K = [[1, 0], [1, 1]]
    on joints 5 and 6, gear ratios ``reduction_ratio`` of ``config/TX40_config.yaml``.  The
    starting values are that file's, mapped to this model's drive terms (doc/robot_files.md,
    "Coupled drives"): reflected rotor inertias k_r^2 I_m = Ia (motor 6: Iam6, the coupled
    term; motor 5: Ia5 - Iam6, so that joint 5's diagonal stays Ia5), friction fv, fs and
    offsets per joint, with drive 6's friction fvm6, fsm6 on v6 = qd5 + qd6 (drive 5's viscous
    fv5 - fvm6 for the same reason) and joint 6's own fv6 qd6 + fs6 sgn(qd6) as its joint-side
    friction (fv6 - fvm6, fs6).  Of FIGAROH's model only joint 6's own rotor term (Ia6 - Iam6)
    qdd6 (8e-4 kg m^2) has no field here.
    """
    spec = RobotModel.from_urdf(urdf).to_dict()
    ratios = np.array(config["reduction_ratio"])
    reflected = np.array(config["Ia"], dtype=float)
    viscous = np.array(config["fv"], dtype=float)
    coulomb = np.array(config["fs"], dtype=float)
    reflected[4:] = reflected[4] - config["Iam6"], config["Iam6"]
    viscous[4:] = viscous[4] - config["fvm6"], config["fvm6"]
    coulomb[5] = config["fsm6"]
    for i, joint in enumerate(spec["joints"]):
        joint["motor"] = {"rotor_inertia": float(reflected[i] / ratios[i] ** 2),
                          "gear_ratio": float(ratios[i])}
        joint["friction"] = {"viscous": float(viscous[i]), "coulomb": float(coulomb[i]),
                             "offset": float(config["offset"][i])}
    spec["joints"][5]["friction"].update(joint_viscous=config["fv"][5] - config["fvm6"],
                                         joint_coulomb=config["fs"][5])
    spec["coupling"] = {"joints": ["joint_5", "joint_6"], "matrix": [[1.0, 0.0], [1.0, 1.0]]}
    work.mkdir(parents=True, exist_ok=True)
    path = work / "staubli_tx40.yaml"
    path.write_text(robot_yaml_text(spec, "Staubli TX40: FIGAROH's example (README beside the "
                                          "data), coupled wrist"))
    return path


def read_tx40(directory: Path, work: Path) -> Recordings:
    """
    Read the TX40's motor positions and motor torques; the robot file's coupling maps them.

    Joint positions are the motor positions through the robot file's drives, q = (diag(k_r)
    K)^-1 q_m, with the example's zero offsets of joints 2 and 3 (-pi/2, +pi/2): a joint state
    holds joint positions.  The efforts stay the motor torques (N m, motor side), read with
    ``--torque-constant 1`` (gain = 1 x the file's gear ratios): identify takes them to the
    joints through the coupling, K^T (k_r tau_m), and fits the coupled rotor and friction of
    drive 6 on the motor side.  The rows committed are every 5th of the 5 kHz recording
    (``ts`` of the configuration x 5).
    """
    config = _tx40_config(directory / "TX40_config.yaml")
    motor_q = np.loadtxt(directory / "pos_read_data_1khz.csv.gz", delimiter=",", skiprows=1)
    motor_tau = np.loadtxt(directory / "curr_data_1khz.csv.gz", delimiter=",", skiprows=1)
    robot = tx40_robot_file(directory / "tx40_mdh_modified.urdf", config, work)
    model = RobotModel.from_yaml(robot)
    drives = np.diag(model.gear_ratio) @ model.coupling
    q = np.linalg.solve(drives, motor_q.T).T + TX40_OFFSETS
    tau = gains_from_constants(model, [1.0]).torques(motor_tau)
    t = np.arange(q.shape[0]) * 5.0 * config["ts"]
    parts = _split("tx40", t, q, None, tau, motor_tau)
    return Recordings(model, str(robot), ["--torque-constant", "1"],
                      {"tx40_train": parts["train"]}, ("tx40_validation", *parts["validation"]),
                      _tx40_published(model, config))


# --- Franka Emika Panda: joint-torque sensors (Gaz et al., RA-L 2019) -----------------------

def _panda_friction(qd):
    """Gaz et al.'s identified friction (``get_FrictionTorque.m``): a sigmoid per joint."""
    a = np.array([0.54615, 0.87224, 0.64068, 1.2794, 0.83904, 0.30301, 0.56489])
    shift = np.array([0.039533, 0.025882, -0.04607, 0.036194, 0.026226, -0.021047, 0.0035526])
    alpha = np.array([5.1181, 9.0657, 10.136, 5.5903, 8.3469, 17.133, 10.336])
    return a / (1.0 + np.exp(-alpha * (qd + shift))) - a / (1.0 + np.exp(-alpha * shift))


def read_panda(directory: Path, work: Path) -> Recordings:
    """Read ``Trajectory_1``'s log (samples row after row, 7 values each) and split it in time."""
    log = directory / "matlab/data/Exciting_Traj/Trajectory_1/rbt_log"

    def load(name):
        return np.loadtxt(log / f"exciting_traj_{name}.txt").reshape(-1, 7)
    t = np.loadtxt(log / "exciting_traj_time.txt")
    q, qd, tau = load("positions"), load("velocity"), load("torques")
    model = RobotModel.from_yaml(CONFIG / "robots" / "panda.yaml")    # Gaz et al.'s bodies
    rigid = model.rigid()

    def published(d):
        return rnea(rigid, d.q, d.qd, d.qdd) + _panda_friction(d.qd)
    parts = _split("panda", t, q, qd, tau, tau)
    return Recordings(model, "panda", [], {"panda_train": parts["train"]},
                      ("panda_validation", *parts["validation"]), published)


# --- Kinova Gen3: joint-torque sensors (Chiha's pyDynaMapp recordings) ----------------------

def read_kinova(directory: Path, work: Path) -> Recordings:
    """
    Read two recordings of a Kinova Gen3's joint-torque sensors: one trains, the other validates.

    Columns: the sample index (1 ms), positions, velocities and the sensors' torques (``TorqueSm``
    of the source; its ``Torque`` columns are its own model's, ``TorqueCur`` the currents').
    The published model is the vendor's URDF as the data set ships it, which has no friction.
    The sensor kind is given (``--torque-source link``: what the data need to be read): the
    sensors sit after the gearbox, yet this 4.7 s recording shows a rotor-like inertia on joint
    7 that ``auto`` takes for motor-side data.
    """
    urdf = directory / "gen3.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # two of Kinova's link inertias are not real bodies
        model = RobotModel.from_urdf(urdf)
    rigid = model.rigid()

    def recording(name):
        data = np.loadtxt(directory / f"{name}_sensor.csv.gz", delimiter=",", skiprows=1)
        return (Recording(name, data[:, 0] * 1e-3, data[:, 1:8], data[:, 8:15], data[:, 15:22]),
                data[:, 15:22])

    def published(d):
        return rnea(rigid, d.q, d.qd, d.qdd)
    training = {"opti_traj_testing1": recording("opti_traj_testing1")}
    return Recordings(model, str(urdf), ["--torque-source", "link"], training,
                      ("opti_traj_testing2", *recording("opti_traj_testing2")), published)


# --- UR10e: motor currents (Mamedov et al., dynamic_calibration) ----------------------------

UR10E_LINKS = ["shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link",
               "wrist_3_link"]
UR10E_RECORDINGS = ["ur-20_02_10-30sec_12harm", "ur-20_02_12-40sec_12harm",
                    "ur-20_02_12-50sec_12harm", "ur-20_02_19_14harm50sec",
                    "ur-20_02_19_15harm50sec"]
UR10E_VALIDATION = "ur-20_01_17-ptp_10_points"


def _ur10e_parameters(directory: Path):
    text = (directory / "UR10E_parameters.txt").read_text()

    def values(name):
        return np.array([float(x) for x in re.search(name + r" = \[(.*?)\]", text,
                                                     re.S).group(1).split()])
    return (values("drvGains"), values("pi_rgd").reshape(6, 10), values("pi_drvs"),
            values("pi_frcn").reshape(6, 3))


def _with_inertials(urdf: str, rigid: np.ndarray) -> str:
    """Return the URDF with the published inertials (per link Ixx..Izz, h, m about its frame)."""
    for name, (ixx, ixy, ixz, iyy, iyz, izz, hx, hy, hz, m) in zip(UR10E_LINKS, rigid):
        c = np.array([hx, hy, hz]) / m
        about_origin = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        at_com = about_origin - m * (c @ c * np.eye(3) - np.outer(c, c))
        numbers = [float(x) for x in (m, *c, at_com[0, 0], at_com[0, 1], at_com[0, 2],
                                      at_com[1, 1], at_com[1, 2], at_com[2, 2])]
        inertial = ('<inertial><mass value="%r"/><origin rpy="0 0 0" xyz="%r %r %r"/><inertia '
                    'ixx="%r" ixy="%r" ixz="%r" iyy="%r" iyz="%r" izz="%r"/></inertial>' %
                    tuple(numbers))
        urdf = re.sub(r'(<link name="%s">.*?)<inertial>.*?</inertial>' % name,
                      lambda match: match.group(1) + inertial, urdf, flags=re.S)
    return urdf


def read_ur10e(directory: Path, work: Path, training=tuple(UR10E_RECORDINGS)) -> Recordings:
    """
    Read the UR10e recordings (time, q, qd, currents) and the published model.

    The bags hold the currents (A) as recorded; the drive-gain file written from the data set's
    ``drvGains`` (torque = gain x current) is the one option the data need.
    """
    gains, rigid, armature, friction = _ur10e_parameters(directory)
    urdf_text = (directory / "URe/urdf/ur10e.urdf").read_text()
    work.mkdir(parents=True, exist_ok=True)
    urdf = work / "ur10e.urdf"
    urdf.write_text(urdf_text)
    model = RobotModel.from_urdf(urdf)
    gain_file = work / "ur10e_gains.yaml"
    gain_file.write_text("".join(f"{j}: {float(g)!r}\n" for j, g in zip(model.joint_names,
                                                                        gains)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # the published inertias are on the cone's edge
        published_rigid = RobotModel.from_urdf(_with_inertials(urdf_text, rigid),
                                               accept_inconsistent_inertia=True).rigid()

    def published(d):
        return (rnea(published_rigid, d.q, d.qd, d.qdd) + armature * d.qdd
                + friction[:, 0] * d.qd + friction[:, 1] * np.sign(d.qd) + friction[:, 2])

    def recording(name):
        data = np.loadtxt(next(directory.glob(f"dataset_ur10e/*/{name}.csv")), delimiter=",")
        t = data[:, 0] - data[0, 0]
        return (Recording(name, t, data[:, 1:7], data[:, 7:13], data[:, 13:19] * gains),
                data[:, 13:19])
    return Recordings(model, str(urdf), ["--torque-constant", str(gain_file)],
                      {name: recording(name) for name in training},
                      (UR10E_VALIDATION, *recording(UR10E_VALIDATION)), published)


CORPUS = (
    Robot("ur10e", "Universal Robots", "motor currents", "shamilmamedov/dynamic_calibration",
          "11af40e7deb758ec080a175fed8fcdd6c99aca29", "no licence", False, read_ur10e),
    Robot("panda", "Franka Emika", "joint-torque sensors",
          "marcocognetti/FrankaEmikaPandaDynModel", "24d85ce4e648e2e894c832bfeee9b16711eb1a1a",
          "GPL-3.0, which this Apache-2.0 package cannot take in", False, read_panda),
    Robot("staubli_tx40", "Staubli", "motor torques from currents, coupled wrist",
          "thanhndv212/figaroh-examples", "c0b5c7f0fda10078be55104f9ee76ac106b7a5ee",
          "Apache-2.0", True, read_tx40),
    Robot("kinova_gen3", "Kinova", "joint-torque sensors", "wissem01chiha/dynamic-identification",
          "ba6035215f0186bbaab65d79c7247f65a219abf8", "MIT", True, read_kinova),
)


def write_bags(recordings: Recordings, work: Path, training=None) -> tuple[list, Path]:
    """Write the training bags (all, or the names ``training``) and the validation bag."""
    names = list(recordings.training) if training is None else list(training)
    joint_names = recordings.model.joint_names
    work.mkdir(parents=True, exist_ok=True)
    bags = []
    for name in names:
        rec, raw = recordings.training[name]
        write_joint_states(work / name, joint_names, rec.t, rec.q, rec.qd, raw)
        bags.append(work / name)
    name, rec, raw = recordings.validation
    write_joint_states(work / name, joint_names, rec.t, rec.q, rec.qd, raw)
    return bags, work / name


def chosen_factor(report: str) -> float:
    """Return the cut-off factor ``robot-dynamics identify`` printed as chosen (1 if none)."""
    match = re.search(r"^\s+x([0-9.]+)\s.*<- chosen$", report, re.M)
    return float(match.group(1)) if match else 1.0


def compare(recordings: Recordings, identified: RobotModel, data) -> tuple:
    """Return the per-joint torque RMS errors (identified, published) on the samples ``data``."""
    return (rms(data.tau - predicted_effort(identified, data.q, data.qd, data.qdd)),
            rms(data.tau - recordings.published(data)))


def validation_samples(recordings: Recordings, factor: float):
    """Return the validation recording's samples, filtered at its spectral cut-off x ``factor``."""
    return prepare_validation(recordings.validation[1], factor, IdentificationOptions())
