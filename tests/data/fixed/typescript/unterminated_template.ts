export interface Release {
  tag: string;
  date: Date;
  notes: string[];
}

function formatDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function changelogEntry(release: Release): string {
  const heading = `## ${release.tag} (${formatDate(release.date)})`;
  const items = release.notes.map((note) => `- ${note}`);
  return [heading, "", ...items, ""].join("\n");
}

export function changelog(releases: Release[]): string {
  const sorted = [...releases].sort((a, b) => b.date.getTime() - a.date.getTime());
  return ["# Changelog", "", ...sorted.map(changelogEntry)].join("\n");
}

const releases: Release[] = [
  { tag: "v1.1.0", date: new Date("2024-03-02"), notes: ["Add --json output"] },
  { tag: "v1.0.0", date: new Date("2024-01-15"), notes: ["First release"] },
];
console.log(changelog(releases));
