"""In-memory store of user sessions that expire after a while."""

import secrets
import time
from dataclasses import dataclass, field


@dataclass
class Session:
    user_id: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    created: float = field(default_factory=time.time)


class SessionStore:
    def __init__(self, lifetime=3600):
        self.lifetime = lifetime
        self.sessions = {}

    def open(self, user_id):
        session = Session(user_id)
        self.sessions[session.token] = session
        return session.token

    def lookup(self, token):
        session = self.sessions.get(token)
        if session is None:
            return None
        if time.time() - session.created > self.lifetime:
            del self.sessions[token]
            return None
        return session.user_id

    def close(self, token):
        return self.sessions.pop(token, None) is not None
