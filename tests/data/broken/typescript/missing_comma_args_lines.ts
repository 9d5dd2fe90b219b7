import { createHash } from "crypto";
import { readFileSync, writeFileSync } from "fs";

interface CacheEntry {
  key: string;
  value: string;
  expiresAt: number;
}

function cacheKey(namespace: string, input: string): string {
  return createHash("sha256").update(`${namespace}:${input}`).digest("hex");
}

function makeEntry(key: string, value: string, ttlSeconds: number, now: number): CacheEntry {
  return { key, value, expiresAt: now + ttlSeconds * 1000 };
}

export function store(file: string, namespace: string, input: string, value: string): void {
  const entries: CacheEntry[] = JSON.parse(readFileSync(file, "utf8"));
  const entry = makeEntry(
    cacheKey(namespace, input),
    value
    3600,
    Date.now(),
  );
  const kept = entries.filter((e) => e.key !== entry.key && e.expiresAt > Date.now());
  writeFileSync(file, JSON.stringify([...kept, entry], null, 2));
}
