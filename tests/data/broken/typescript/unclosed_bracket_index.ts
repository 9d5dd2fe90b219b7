export interface Row {
  [column: string]: string;
}

export function parseCsv(text: string, separator = ","): Row[] {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  if (lines.length === 0) {
    return [];
  }
  const header = lines[0.split(separator).map((h) => h.trim());
  const rows: Row[] = [];
  for (const line of lines.slice(1)) {
    const cells = line.split(separator);
    const row: Row = {};
    header.forEach((name, i) => {
      row[name] = (cells[i] ?? "").trim();
    });
    rows.push(row);
  }
  return rows;
}

export function column(rows: Row[], name: string): string[] {
  return rows.map((row) => row[name]);
}

const sample = "name,age\nAda,36\nGrace,45\n";
const rows = parseCsv(sample);
console.log(column(rows, "name").join(", "));
