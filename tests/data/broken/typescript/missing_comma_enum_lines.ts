export enum LogLevel {
  Debug = 10,
  Info = 20
  Warn = 30,
  Error = 40,
}

const NAMES: Record<string, LogLevel> = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warn,
  error: LogLevel.Error,
};

export class Logger {
  constructor(
    private readonly scope: string,
    private readonly threshold: LogLevel = LogLevel.Info,
  ) {}

  static fromEnv(scope: string): Logger {
    const level = NAMES[(process.env.LOG_LEVEL ?? "info").toLowerCase()];
    return new Logger(scope, level ?? LogLevel.Info);
  }

  log(level: LogLevel, message: string): void {
    if (level < this.threshold) return;
    const name = LogLevel[level].toUpperCase();
    console.log(`${new Date().toISOString()} ${name} [${this.scope}] ${message}`);
  }
}
