"""diagnoseOnly: report every registered formula's verdict for each top kernel."""

from __future__ import annotations

from intelliperf.models import Evidence, Finding, KernelProfile

from .base import Formula


class DiagnoseOnly(Formula):
    name = "diagnoseOnly"
    summary = "rank the kernels and report what every registered formula finds in each"
    evidence = ()

    def diagnose(self, kernel: KernelProfile, evidence: list[Evidence]) -> Finding:
        return self.finding(False, "diagnoseOnly delegates to the other formulas; see their findings.")

    def needs(self, registry) -> set[str]:
        others = [registry.create(name) for name in registry.names() if name != self.name]
        return {need for formula in others for need in formula.needs(registry)}

    def wants_regions(self, registry) -> bool:
        return any(registry.create(name).wants_regions(registry) for name in registry.names() if name != self.name)

    def counter_metrics(self, registry, backend: str) -> list[str]:
        others = [registry.create(name) for name in registry.names() if name != self.name]
        return sorted({m for formula in others for m in formula.counter_metrics(registry, backend)})

    def evaluate(self, kernel, evidence, registry) -> list[Finding]:
        return [registry.create(name).diagnose(kernel, evidence) for name in registry.names() if name != self.name]
