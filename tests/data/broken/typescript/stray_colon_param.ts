type Level = "debug" | "info" | "warn" | "error";

const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export interface LogRecord {
  level: Level;
  message: string;
  time: Date;
  fields: Record<string, unknown>;
}

export class Logger {
  private records: LogRecord[] = [];

  constructor(private readonly name: string, private readonly minimum: Level = "info") {}

  log(level: Level, message: : string, fields: Record<string, unknown> = {}): void {
    if (ORDER[level] < ORDER[this.minimum]) {
      return;
    }
    const record = { level, message, time: new Date(), fields };
    this.records.push(record);
    console.log(`[${record.time.toISOString()}] ${this.name} ${level}: ${message}`);
  }

  info(message: string, fields?: Record<string, unknown>): void {
    this.log("info", message, fields);
  }

  history(): readonly LogRecord[] {
    return this.records;
  }
}
