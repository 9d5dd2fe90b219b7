"""``assist loadtest``: drive a daemon at a set rate with a realistic mix, and say what held.

``plan`` is the mix and the open-loop schedule, ``corpus`` the real code the requests carry,
``workload`` the request each planned slot sends, ``warm`` what is answered before the clock
starts, ``driver`` the open-loop sender, ``tally`` the figures and the verdict, ``daemon_figures``
the daemon's own counters from ``/metrics``, and ``run`` puts them together.
"""
