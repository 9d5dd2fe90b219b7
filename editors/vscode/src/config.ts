/**
 * Reads the `assist.*` settings into what the extension and the language server need: the
 * server's `initializationOptions` (also sent on every settings change), the command that starts
 * the server and the languages it serves.
 *
 * settings.json can hold any JSON whatever package.json declares, so each value is checked on its
 * own: a bad one produces one warning naming it and falls back to its default, and the other
 * settings still apply. The ranges match the server's own checks (lsp/options.py), so a value the
 * extension accepts is never rejected again by the server.
 */

export type LogLevel = 'error' | 'warning' | 'info' | 'debug';
const LOG_LEVELS: readonly LogLevel[] = ['error', 'warning', 'info', 'debug'];

/** The object sent as `initializationOptions` and as the `assist` section of the settings. */
export interface InitializationOptions {
  daemonUrl: string | null;
  ca: string | null;
  autostart: boolean;
  debounceMs: number;
  maxTokens: number | null;
  inlineCompletion: boolean;
  completionItems: boolean;
  stageNotifications: boolean;
  fixCandidates: number | null;
  logLevel: LogLevel;
}

export const DEFAULT_OPTIONS: Readonly<InitializationOptions> = Object.freeze({
  daemonUrl: null,
  ca: null,
  autostart: true,
  debounceMs: 75,
  maxTokens: null,
  inlineCompletion: true,
  completionItems: true,
  stageNotifications: true,
  fixCandidates: null,
  logLevel: 'info',
});

export const DEFAULT_LANGUAGES: readonly string[] = Object.freeze([
  'python',
  'javascript',
  'javascriptreact',
  'typescript',
  'typescriptreact',
  'go',
  'rust',
  'java',
  'c',
  'cpp',
]);

export const DEFAULT_SERVER_PATH = 'assist';

/** Everything the extension reads from the `assist` section. */
export interface ExtensionSettings {
  initializationOptions: InitializationOptions;
  serverPath: string;
  serverArgs: string[];
  languages: string[];
}

/** What `vscode.workspace.getConfiguration('assist')` offers; a plain object serves in tests. */
export interface SettingsSource {
  get(key: string): unknown;
}

/** Settings whose change needs a new server process (or a new document selector). */
export const RESTART_KEYS: readonly string[] = ['serverPath', 'serverArgs', 'languages'];

// Same bounds as the server's AssistOptions fields.
const DEBOUNCE_RANGE = { min: 0, max: 5000 };
const MAX_TOKENS_RANGE = { min: 1, max: 1024 };
const FIX_CANDIDATES_RANGE = { min: 1, max: 16 };

/** Collects one warning per rejected value while the settings are read. */
class SettingsReader {
  readonly warnings: string[] = [];

  constructor(private readonly source: SettingsSource) {}

  private raw(key: string): unknown {
    try {
      return this.source.get(key);
    } catch {
      // A throwing getter (a broken settings file) counts as unset rather than ending activation.
      return undefined;
    }
  }

  private reject<T>(key: string, value: unknown, expected: string, fallback: T): T {
    this.warnings.push(
      `assist.${key}: ${describe(value)} is not ${expected}; using ${describe(fallback)}`,
    );
    return fallback;
  }

  boolean(key: string, fallback: boolean): boolean {
    const value = this.raw(key);
    if (value === undefined || value === null) {
      return fallback;
    }
    return typeof value === 'boolean' ? value : this.reject(key, value, 'true or false', fallback);
  }

  integer(key: string, fallback: number, range: { min: number; max: number }): number {
    const value = this.raw(key);
    if (value === undefined || value === null) {
      return fallback;
    }
    if (isIntegerIn(value, range)) {
      return value;
    }
    return this.reject(key, value, `an integer from ${range.min} to ${range.max}`, fallback);
  }

  /** An integer, or null meaning "the server's default". */
  optionalInteger(key: string, range: { min: number; max: number }): number | null {
    const value = this.raw(key);
    if (value === undefined || value === null) {
      return null;
    }
    if (isIntegerIn(value, range)) {
      return value;
    }
    return this.reject(key, value, `null or an integer from ${range.min} to ${range.max}`, null);
  }

  choice<T extends string>(key: string, choices: readonly T[], fallback: T): T {
    const value = this.raw(key);
    if (value === undefined || value === null) {
      return fallback;
    }
    if (typeof value === 'string' && (choices as readonly string[]).includes(value)) {
      return value as T;
    }
    return this.reject(key, value, `one of ${choices.join(', ')}`, fallback);
  }

  /** An http(s) URL, or null for the local default daemon. An empty string also means null. */
  url(key: string): string | null {
    const value = this.raw(key);
    if (value === undefined || value === null) {
      return null;
    }
    if (typeof value === 'string') {
      const trimmed = value.trim();
      if (trimmed === '') {
        return null;
      }
      if (isHttpUrl(trimmed)) {
        return trimmed;
      }
    }
    return this.reject(key, value, 'null or an http(s) URL', null);
  }

  /** A file path, or null for none. An empty string also means null. */
  optionalPath(key: string): string | null {
    const value = this.raw(key);
    if (value === undefined || value === null) {
      return null;
    }
    if (typeof value === 'string') {
      return value.trim() === '' ? null : value.trim();
    }
    return this.reject(key, value, 'null or a file path', null);
  }

  nonEmptyString(key: string, fallback: string): string {
    const value = this.raw(key);
    if (value === undefined || value === null) {
      return fallback;
    }
    if (typeof value === 'string' && value.trim() !== '') {
      return value.trim();
    }
    return this.reject(key, value, 'a non-empty string', fallback);
  }

  stringList(key: string, fallback: readonly string[], allowEmpty: boolean): string[] {
    const value = this.raw(key);
    if (value === undefined || value === null) {
      return [...fallback];
    }
    const valid =
      Array.isArray(value) &&
      value.every((item) => typeof item === 'string' && item !== '') &&
      (allowEmpty || value.length > 0);
    if (valid) {
      return [...new Set(value as string[])];
    }
    const expected = allowEmpty ? 'a list of strings' : 'a non-empty list of strings';
    return this.reject(key, value, expected, [...fallback]);
  }
}

function isIntegerIn(value: unknown, range: { min: number; max: number }): value is number {
  return (
    typeof value === 'number' && Number.isInteger(value) && value >= range.min && value <= range.max
  );
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function describe(value: unknown): string {
  if (value === undefined) {
    return 'undefined';
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function readOptions(reader: SettingsReader): InitializationOptions {
  return {
    daemonUrl: reader.url('daemonUrl'),
    ca: reader.optionalPath('ca'),
    autostart: reader.boolean('autostart', DEFAULT_OPTIONS.autostart),
    debounceMs: reader.integer('debounceMs', DEFAULT_OPTIONS.debounceMs, DEBOUNCE_RANGE),
    maxTokens: reader.optionalInteger('maxTokens', MAX_TOKENS_RANGE),
    inlineCompletion: reader.boolean('inlineCompletion', DEFAULT_OPTIONS.inlineCompletion),
    completionItems: reader.boolean('completionItems', DEFAULT_OPTIONS.completionItems),
    stageNotifications: reader.boolean('stageNotifications', DEFAULT_OPTIONS.stageNotifications),
    fixCandidates: reader.optionalInteger('fixCandidates', FIX_CANDIDATES_RANGE),
    logLevel: reader.choice('logLevel', LOG_LEVELS, DEFAULT_OPTIONS.logLevel),
  };
}

/** The server's `initializationOptions` from the `assist` settings, with one warning per bad value. */
export function toInitializationOptions(source: SettingsSource): {
  options: InitializationOptions;
  warnings: string[];
} {
  const reader = new SettingsReader(source);
  return { options: readOptions(reader), warnings: reader.warnings };
}

/** All of the extension's settings, with one warning per bad value. */
export function readSettings(source: SettingsSource): {
  settings: ExtensionSettings;
  warnings: string[];
} {
  const reader = new SettingsReader(source);
  const settings: ExtensionSettings = {
    initializationOptions: readOptions(reader),
    serverPath: reader.nonEmptyString('serverPath', DEFAULT_SERVER_PATH),
    serverArgs: reader.stringList('serverArgs', [], true),
    // An empty list would leave the server with no documents at all; that is never what is meant.
    languages: reader.stringList('languages', DEFAULT_LANGUAGES, false),
  };
  return { settings, warnings: reader.warnings };
}

/**
 * The answer to a `workspace/configuration` item, so the server reads the same checked values
 * it got at initialization: the whole object for `assist`, one value for `assist.<key>`.
 * `undefined` means the section is not ours and VS Code's own answer stands.
 */
export function configurationValue(
  section: string | undefined | null,
  options: InitializationOptions,
): unknown {
  if (section === 'assist') {
    return { ...options };
  }
  if (typeof section === 'string' && section.startsWith('assist.')) {
    const key = section.slice('assist.'.length);
    if (Object.prototype.hasOwnProperty.call(options, key)) {
      return options[key as keyof InitializationOptions];
    }
  }
  return undefined;
}
