"""Parts of the completion-quality benchmark (``tests/bench/bench_quality.py``)."""
