"""A token bucket that limits how often an action may run."""

import time


class TokenBucket:
    def __init__(self, rate, capacity):
        self.rate = rate
        self.capacity = capacity
        self.tokens = capacity
        self.updated = time.monotonic()

    def _refill(self):
        now = time.monotonic()
        elapsed = now - self.updated
        self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
        self.updated = now

    def take(self, amount=1):
        self._refill()
        if self.tokens < amount:
            return False
        self.tokens -= amount
        return True

    def wait_time(self, amount=1):
        self._refill()
        missing = amount - self.tokens
        return max(0.0, missing / self.rate)


if __name__ == "__main__":
    bucket = TokenBucket(rate=2, capacity=5)
    for attempt in range(8):
        if bucket.take():
            print(f"attempt {attempt}: allowed")
        else:
            print(f"attempt {attempt}: wait {bucket.wait_time():.2f}s")
