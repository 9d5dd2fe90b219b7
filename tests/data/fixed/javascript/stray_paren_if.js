const crypto = require("crypto");

class SessionStore {
  constructor(ttlMs = 30 * 60 * 1000) {
    this.ttlMs = ttlMs;
    this.sessions = new Map();
  }

  create(userId) {
    const token = crypto.randomBytes(24).toString("hex");
    this.sessions.set(token, { userId, expires: Date.now() + this.ttlMs });
    return token;
  }

  get(token) {
    const session = this.sessions.get(token);
    if (!session || session.expires < Date.now()) {
      this.sessions.delete(token);
      return null;
    }
    session.expires = Date.now() + this.ttlMs;
    return session.userId;
  }

  sweep() {
    const now = Date.now();
    for (const [token, session] of this.sessions) {
      if (session.expires < now) this.sessions.delete(token);
    }
  }
}

module.exports = { SessionStore };
