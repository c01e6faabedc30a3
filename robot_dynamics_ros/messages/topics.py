"""
The ROS names the nodes and the bag tools share.

The nodes publish under ``DEFAULT_NAMESPACE`` unless told otherwise (the launch file, the
bringup and the demo), and ``bag process`` looks for the reference trajectory and writes its
outputs under the same names, so a bag recorded from the default launch is processed without
options.  Plain strings: no ROS needed.
"""

DEFAULT_NAMESPACE = "robot_dynamics"
