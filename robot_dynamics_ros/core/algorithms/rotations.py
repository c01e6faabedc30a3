"""
The elementary frame changes of the scalar-component recursions.

Used by ``rnea.py``, ``rnea_batch.py`` and ``crba.py``; a component is a Python float (single
call) or a numpy column (batch).

Frames are the model's internal modified-DH frames: T_{i-1,i} = Rx(alpha) Tx(a) Rz(theta) Tz(d).
The intermediate frame X (after Rx(alpha)) shares the parent's origin, and in it the child's
origin is simply (a, 0, d).  ``ca``, ``sa`` are exact for multiples of pi/2
(``transforms.exact_cos_sin``), so those rotations only permute and negate components.
"""
from __future__ import annotations


def rot_x_inv(ca, sa, x, y, z):
    """Components of a frame-(i-1) vector in the intermediate frame X: Rx(-alpha) v."""
    if sa == 0.0:
        return (x, y, z) if ca > 0 else (x, -y, -z)
    if ca == 0.0:
        return (x, z, -y) if sa > 0 else (x, -z, y)
    return x, ca * y + sa * z, ca * z - sa * y


def rot_x(ca, sa, x, y, z):
    """Components of an X-frame vector in frame i-1: Rx(alpha) v."""
    if sa == 0.0:
        return (x, y, z) if ca > 0 else (x, -y, -z)
    if ca == 0.0:
        return (x, -z, y) if sa > 0 else (x, z, -y)
    return x, ca * y - sa * z, sa * y + ca * z
