"""
Imported by the local workers' forkserver (``engine.py``) before it forks them: loads the kernels.

Importing this module loads the compiled kernels from their disk cache (the install's
ahead-of-time extension, in milliseconds; where it is missing, numba's import and its first cache
load: about 1 s of CPU, more than the imports) and computes one inverse dynamics on them; the
workers forked afterwards start with them loaded, instead of each paying that on its first bag
(or running plain Python first: ``core/algorithms/route.py``, which a process that has loaded
the kernels skips).  The kernels are generic over the model (its constants are data), so
one robot's call serves all.
"""
import numpy as np

from ..core import RobotModel
from ..core.algorithms.route import select

select(RobotModel.named("puma560"), "compiled").rnea(np.zeros(6), np.zeros(6), np.zeros(6))
