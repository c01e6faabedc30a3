"""
The plot ``robot-dynamics identify`` writes: measured against predicted torques, per joint.

One row per joint; the left column shows the samples fitted, the right one the samples held out
and those of ``--validate`` bags after them (only the bags' for a file refitted to all samples,
``pipeline`` step 5: it has fitted the held-out share), each with the measured efforts, the
starting file's prediction and the identified model's, and the RMS errors in the titles.
Samples are shown in order (the ones left out near velocity reversals leave no gap), so that the
columns compare the same kind of motion.
"""
from __future__ import annotations

import numpy as np

from ..core.identification import predicted_effort
from ..core.identification.validation import rms


def _panel(ax, tau, before, after, title):
    x = np.arange(tau.shape[0])
    ax.plot(x, tau, color="0.6", lw=0.8, label="measured")
    ax.plot(x, before, color="C3", lw=0.8, ls="--", label="robot file")
    ax.plot(x, after, color="C0", lw=1.0, label="identified")
    ax.set_title(f"{title}: RMS error {rms(tau - before):.3g} -> {rms(tau - after):.3g}",
                 fontsize=8)


def plot(path, model, identified, fit, validations=()) -> None:
    """Write the figure (module docstring) to ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sets = [("fitted", fit.training)]
    checks = ([("held out", fit.held_out)] if fit.held_out is not None and not fit.refitted
              else [])
    checks += [(report.title, data) for report, data in validations]
    n, columns = model.n, 1 + (1 if checks else 0)
    fig, axes = plt.subplots(n, columns, figsize=(7 * columns, 1.9 * n), squeeze=False)
    for col, group in enumerate([sets] + ([checks] if checks else [])):
        q = np.concatenate([d.q for _, d in group])
        qd = np.concatenate([d.qd for _, d in group])
        qdd = np.concatenate([d.qdd for _, d in group])
        tau = np.concatenate([d.tau for _, d in group])
        before = predicted_effort(model, q, qd, qdd)
        after = predicted_effort(identified, q, qd, qdd)
        label = " + ".join(name for name, _ in group)
        for j in range(n):
            ax = axes[j, col]
            _panel(ax, tau[:, j], before[:, j], after[:, j], f"{model.joint_names[j]}, {label}")
            if col == 0:
                ax.set_ylabel("N m or N")
        axes[-1, col].set_xlabel("sample")
    axes[0, 0].legend(loc="upper right", fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
