"""The completion pipeline: routing, the fast and deep paths in stages, and what feeds them.
Typed cache hits, the feedback book and prefetch live here too.
"""
