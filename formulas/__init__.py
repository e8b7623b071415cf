"""Formulas: bottleneck detectors (installed as `intelliperf.formulas`)."""

if __name__ != "intelliperf.formulas":  # this folder imported from the repository root as a top-level package
    raise ImportError(
        f"{__name__}: this folder is the package intelliperf.formulas; import that (a top-level "
        "`formulas` would be a second copy whose classes are not intelliperf's)"
    )


from .base import Formula, FormulaCatalog
from .registry import ENTRY_POINT_GROUP, Registry, default_registry

__all__ = ["ENTRY_POINT_GROUP", "Formula", "FormulaCatalog", "Registry", "default_registry"]
