export interface Route {
  method: "GET" | "POST" | "DELETE";
  path: string;
  handler: (params: Record<string, string>) => string;
}

const routes: Route[] = [
  { method: "GET", path: "/users/:id", handler: (p) => `user ${p.id}` },
  { method: "DELETE", path: "/users/:id", handler: (p) => `deleted ${p.id}` },
  { method: "GET", path: "/health", handler: () => "ok" },
];

function match(pattern: string, path: string): Record<string, string> | null {
  const expected = pattern.split("/");
  const actual = path.split("/");
  if (expected.length !== actual.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < expected.length; i++) {
    if (expected[i].startsWith(":")) {
      params[expected[i].slice(1)] = actual[i];
    } else if (expected[i] !== actual[i]) {
      return null;
    }
  }
  return params;
}

export function dispatch(method: string, path: string): string {
  for (const route of routes) {
    const params = route.method === method ? match(route.path, path) : null;
    if (params) return route.handler(params);
  }
  return "404 not found";
}
