"""``assist loadtest``: drive a daemon at a set rate with a realistic mix, and say what held.
``run`` puts the plan, corpus, workload, warm-up, driver, tally and daemon figures together."""
