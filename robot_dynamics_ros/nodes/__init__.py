"""The ROS 2 nodes: thin adapters that convert messages, call ``robot_dynamics_ros.core`` and publish.

``common`` holds what every node shares (parameters, input checks, outputs, ``main``).
"""
