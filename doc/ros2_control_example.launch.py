"""Wire robot_dynamics_ros into a ros2_control stack (example)."""
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    dynamics = PathJoinSubstitution(
        [FindPackageShare("robot_dynamics_ros"), "launch", "robot_dynamics.launch.py"])
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(dynamics),
            launch_arguments={
                "robot": "puma560",
                "nodes": "inverse_dynamics,trajectory_scaler,dynamics_service",
                # joint_state_broadcaster publishes /joint_states (the default)
                "joint_states": "/joint_states",
                # the planner's trajectory in, the re-timed one to the JTC
                "reference_trajectory": "/planned_trajectory",
                "scaled_trajectory": "/joint_trajectory_controller/joint_trajectory",
                # feedforward torques to a JointGroupEffortController
                "effort_command": "/effort_controller/commands",
            }.items()),
    ])
