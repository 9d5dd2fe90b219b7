"""The GPUs' memory and utilisation as Prometheus gauges, read from NVML at each scrape.
Left out of /metrics altogether where NVML finds no GPU."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from daemon.observe.gpu import GpuDevice

Devices = Callable[[], list[GpuDevice] | None]

_GAUGES: list[tuple[str, str, Callable[[GpuDevice], float]]] = [
    ("assist_gpu_memory_used_bytes", "GPU memory in use (all processes)", lambda d: d.used_bytes),
    ("assist_gpu_memory_free_bytes", "GPU memory free", lambda d: d.free_bytes),
    ("assist_gpu_memory_total_bytes", "GPU memory in all", lambda d: d.total_bytes),
    (
        "assist_gpu_utilization_ratio",
        "Share of the last sample period in which the GPU ran a kernel (0 to 1)",
        lambda d: d.utilization_percent / 100,
    ),
]


# A custom collector without ``describe``: the registry (which does not describe collectors
# itself) then asks NVML only at a scrape, and the families are those of the GPUs there are.
class GpuCollector:
    """NVML's figures of each GPU, read at each scrape rather than copied into metrics."""

    def __init__(self, devices: Devices) -> None:
        self._devices = devices

    def collect(self) -> Iterator[Metric]:
        devices = self._devices()
        if not devices:
            return
        for name, documentation, read in _GAUGES:
            family = GaugeMetricFamily(name, documentation, labels=["gpu", "name"])
            for device in devices:
                family.add_metric([str(device.index), device.name], float(read(device)))
            yield family
