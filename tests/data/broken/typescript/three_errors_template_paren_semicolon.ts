export interface Metric {
  name: string;
  value: number;
  labels: Record<string, string>;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
}

function labelText(labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`;
  return pairs.length ? `{${pairs.join(",")}}` : "";
}

export function exposition(metrics: Metric[]): string {
  const lines: string[] = [];
  for (let i = 0 i < metrics.length; i++) {
    const metric = metrics[i];
    lines.push(`${metric.name}${labelText(metric.labels)} ${metric.value});
  }
  return lines.join("\n") + "\n";
}

console.log(
  exposition([
    { name: "http_requests_total", value: 1027, labels: { method: "GET", code: "200" } },
    { name: "process_open_fds", value: 12, labels: {} },
  ]),
);
