"""
Run the command line with every bag write held up (``python slow_bag_writer.py SECONDS ARGS...``).

A recorder that falls behind its publishers, deterministically: each ``BagWriter.write`` sleeps
SECONDS first, so the queue of a recording grows as on a heavily loaded machine.
"""
import sys
import time


def main() -> int:
    from robot_dynamics_ros.bags import storage
    from robot_dynamics_ros.commands.cli import main as cli_main
    delay, write = float(sys.argv[1]), storage.BagWriter.write

    def slow_write(self, connection, timestamp, data):
        time.sleep(delay)
        write(self, connection, timestamp, data)
    storage.BagWriter.write = slow_write
    return cli_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
