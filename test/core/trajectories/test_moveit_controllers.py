"""core.trajectories.moveit_controllers: the controller of a MoveIt moveit_controllers.yaml."""
import pytest

from robot_dynamics_ros.core.errors import InputError
from robot_dynamics_ros.core.trajectories.moveit_controllers import controller_action
from robot_dynamics_ros.core.trajectories.moveit_controllers import read_controller

# the shape the MoveIt Setup Assistant writes (panda_moveit_config's, with a second controller)
FILE = """\
moveit_controller_manager: moveit_simple_controller_manager/MoveItSimpleControllerManager

moveit_simple_controller_manager:
  controller_names:
    - panda_arm_controller
    - panda_hand_controller

  panda_arm_controller:
    type: FollowJointTrajectory
    action_ns: follow_joint_trajectory
    default: true
    joints:
      - panda_joint1
      - panda_joint2
  panda_hand_controller:
    type: GripperCommand
    joints:
      - panda_finger_joint1
    action_ns: gripper_cmd
    default: true
"""


@pytest.fixture
def controllers(tmp_path):
    path = tmp_path / "moveit_controllers.yaml"
    path.write_text(FILE)
    return str(path)


def test_named_controller_and_its_action(controllers):
    c = read_controller(controllers, "panda_arm_controller")
    assert (c.name, c.action_ns, c.joints) == ("panda_arm_controller", "follow_joint_trajectory",
                                               ("panda_joint1", "panda_joint2"))
    assert controller_action(c.name, c.action_ns) == \
        "/panda_arm_controller/follow_joint_trajectory"
    assert controller_action("/ns/arm", "") == "/ns/arm"


@pytest.mark.parametrize("name, reason", [
    ("panda_hand_controller", "of type 'GripperCommand', not FollowJointTrajectory"),
    ("arm", "no controller 'arm'"),
    ("", "2 controllers, 2 of them default: name one"),
])
def test_refused_with_the_file_and_the_name(controllers, name, reason):
    with pytest.raises(InputError, match=reason) as info:
        read_controller(controllers, name)
    assert controllers in str(info.value)


def test_not_a_moveit_controllers_file(tmp_path):
    path = tmp_path / "joint_limits.yaml"
    path.write_text("joint_limits: {}\n")
    with pytest.raises(InputError, match="controller_names"):
        read_controller(str(path))
    with pytest.raises(InputError, match="controller_name: empty"):
        controller_action("", "follow_joint_trajectory")
