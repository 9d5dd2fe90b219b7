export type Method = "GET" | "POST" | "PUT" | "DELETE";

export interface RequestOptions {
  method?: Method;
  headers?: Record<string, string>;
  body?: unknown;
  timeoutMs?: number;
}

const defaults: Required<Omit<RequestOptions, "body">> = {
  method: "GET",
  headers: { Accept: "application/json" },
  timeoutMs: 5000,
};

export async function request<T>(url: string, options: RequestOptions = {}): Promise<T> {
  const merged = { ...defaults, ...options };
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), merged.timeoutMs);
  try {
    const res = await fetch(url, {
      method: merged.method,
      headers: merged.headers,
      body: merged.body === undefined ? undefined : JSON.stringify(merged.body),
      signal: controller.signal,
    });
    if (!res.ok) {
      throw new Error(`${merged.method} ${url} failed: ${res.status}`);
    }
    return (await res.json()) as T;
  } finally {
    clearTimeout(timer);
  }
}
