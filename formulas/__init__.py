"""Formulas: bottleneck detectors (installed as `intelliperf.formulas`)."""

from .base import Formula
from .registry import ENTRY_POINT_GROUP, Registry, default_registry

__all__ = ["ENTRY_POINT_GROUP", "Formula", "Registry", "default_registry"]
