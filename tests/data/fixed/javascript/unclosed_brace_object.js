"use strict";

const DEFAULT_OPTIONS = {
  retries: 3,
  backoffMs: 250,
  timeoutMs: 5000,
};

async function fetchJson(url, options = {}) {
  const settings = { ...DEFAULT_OPTIONS, ...options };
  let lastError;
  for (let attempt = 0; attempt <= settings.retries; attempt++) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), settings.timeoutMs);
    try {
      const response = await fetch(url, {
        headers: { Accept: "application/json" },
        signal: controller.signal,
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return await response.json();
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, settings.backoffMs * 2 ** attempt));
    } finally {
      clearTimeout(timer);
    }
  }
  throw lastError;
}

module.exports = { fetchJson, DEFAULT_OPTIONS };
