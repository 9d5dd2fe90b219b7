"""The completion pipeline: routing, the fast and deep paths in stages, typed cache hits, the
feedback book and prefetch."""
