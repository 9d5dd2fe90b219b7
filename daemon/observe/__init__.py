"""Observability: one record per request in SQLite, percentiles and rates, the Prometheus view,
the dashboard page and GPU figures."""
