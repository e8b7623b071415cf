"""intelliperf: an automated GPU performance engineer for Triton kernels.

The public names below load on first use, so that the recorder (which runs inside the user's
program) and `intelliperf --help` import nothing they do not need.
"""

from importlib import import_module

__version__ = "0.1.0"

_EXPORTS = {
    "AccessSite": "models",
    "Evidence": "models",
    "Finding": "models",
    "Formula": "formulas",
    "IntelliPerfError": "errors",
    "KernelDiagnosis": "models",
    "KernelProfile": "models",
    "Metric": "models",
    "Optimization": "models",
    "Registry": "formulas",
    "Report": "models",
    "SourceLine": "models",
    "default_registry": "formulas",
    "diagnose": "api",
    "optimize": "api",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'intelliperf' has no attribute {name!r}")
    value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
