import time
from collections import defaultdict

DEFAULT_LIMITS = {"login": 5, "search": 30, "upload": 2}


class RateLimiter:
    """Allow at most N calls per action per minute for each user."""

    def __init__(self, limits=None, window=60.0):
        self.limits = dict(DEFAULT_LIMITS, **(limits or {}))
        self.window = window
        self.calls = defaultdict(list)

    def allow(self, user, action):
        now = time.monotonic()
        key = (user, action)
        recent = [t for t in self.calls[key] if now - t < self.window]
        self.calls[key] = recent
        if len(recent) >= self.limits.get(action, 10):
            return False
        recent.append(now)
        return True

    def stats(self):
        return {
            "users": len({user for user, _ in self.calls}),
            "keys": len(self.calls),
            "calls": sum(len(times) for times in self.calls.values()),
        }}


if __name__ == "__main__":
    limiter = RateLimiter({"login": 2})
    print([limiter.allow("ana", "login") for _ in range(4)])
    print(limiter.stats())
