"""
Imported by the local workers' forkserver (``engine.py``) before it forks them: loads the kernels.

Importing this module computes one inverse dynamics, which imports numba and loads the
compiled kernels from their disk cache (about 1 s of CPU, more than the imports); the workers
forked afterwards start with them loaded, instead of each paying that on its first bag.  The
kernels are generic over the model (its constants are data), so one robot's call serves all.
"""
import numpy as np

from ..core import RobotModel, rnea

rnea(RobotModel.named("puma560"), np.zeros(6), np.zeros(6), np.zeros(6))
