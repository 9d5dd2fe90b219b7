"""Observability: request records, percentiles and rates, Prometheus, the dashboard, the GPU."""
