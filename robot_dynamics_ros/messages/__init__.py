"""
Messages: what a usable message is and how it maps onto the core's arrays.

ROS-free, for the nodes and the bag tools alike (numpy and the core only; a message object is
read by its fields, whichever library made it, rclpy's or rosbags'):

* ``checks``: the one set of checks of a joint state (and the bound of every joint value);
* ``cdr``: the one CDR codec of sensor_msgs/JointState (the bag tools' batches, the nodes'
  templates);
* ``conversions``: message objects -> checked core arrays and trajectories;
* ``topics``: the names the nodes and the bag tools share (the default namespace).

With rclpy and the message packages, for the nodes and the commands only:

* ``ros``: core -> rclpy messages (trajectories, stamps);
* ``serialized``: the nodes' serialized JointState reader and the effort writers.

Nothing here imports anything else of the package but ``core``.
"""
