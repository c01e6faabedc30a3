"""
Dynamic parameter identification (Siciliano et al. 2009, Sect. 7.4).

One algorithm per file: ``parameters.py`` (layout, names, values, a model from values),
``regressor.py`` (tau = Y pi), ``base_parameters.py`` (identifiable combinations),
``identify.py`` (ordinary / weighted / physically consistent least squares), ``physical.py``
(the consistency LMI), ``filtering.py`` (derivatives and samples from recordings),
``payload.py`` (a payload's 10 parameters), ``excitation.py`` (optimised Fourier trajectories).
"""
from .base_parameters import BaseParameters, base_parameters
from .excitation import Excitation, FourierTrajectory, design_excitation
from .filtering import Derivatives, IdentificationData, derivatives, identification_data
from .identify import IdentificationResult, InconsistentParametersWarning, identify
from .parameters import (
    FRICTION_KINDS,
    consistency_problems,
    model_with_parameters,
    parameter_names,
    parameter_vector,
    predicted_effort)
from .payload import PayloadResult, identify_payload
from .physical import InconsistentPriorWarning
from .regressor import regressor

__all__ = ["regressor", "parameter_names", "parameter_vector", "model_with_parameters",
           "predicted_effort", "FRICTION_KINDS",
           "consistency_problems", "BaseParameters", "base_parameters", "identify",
           "IdentificationResult", "InconsistentParametersWarning", "InconsistentPriorWarning",
           "derivatives", "Derivatives",
           "identification_data", "IdentificationData", "identify_payload", "PayloadResult",
           "design_excitation", "Excitation", "FourierTrajectory"]
