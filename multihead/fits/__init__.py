"""Offline: fitting and validating the cost model against logs and measurements, and their reports.

The runtime never imports this package (tests/test_layout.py); it reads what these modules write
through cost.serving.fitted and cost.time.timing.load_constants."""
