/**
 * A small stand-in for the `vscode` module: the parts of the API the extension uses, recording
 * what the extension did (messages, commands, status bar items, progress reports) so tests can
 * assert on it. `reset()` between tests gives a fresh window and workspace.
 */

type Listener<T> = (event: T) => void;

export class Disposable {
  constructor(private readonly onDispose: () => void = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((item) => item.dispose()));
  }
  dispose(): void {
    this.onDispose();
  }
}

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (listener: Listener<T>): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    });
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
  dispose(): void {
    this.listeners = [];
  }
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly fsPath: string,
  ) {}
  static file(fsPath: string): Uri {
    return new Uri('file', fsPath);
  }
  static untitled(name: string): Uri {
    return new Uri('untitled', name);
  }
  static parse(text: string): Uri {
    const match = /^([a-z][a-z0-9+.-]*):(?:\/\/)?(.*)$/i.exec(text);
    if (match === null) {
      throw new Error(`not a URI: ${text}`);
    }
    return new Uri(match[1]!, decodeURI(match[2]!));
  }
  get path(): string {
    return this.fsPath;
  }
  toString(): string {
    return this.scheme === 'file' ? `file://${encodeURI(this.fsPath)}` : `${this.scheme}:${this.fsPath}`;
  }
}

// vscode-languageclient subclasses these when it loads; nothing in the tests runs them.
export class CompletionItem {}
export class CodeLens {}
export class DocumentLink {}
export class CodeAction {}
export class Diagnostic {}
export class CallHierarchyItem {}
export class TypeHierarchyItem {}
export class SymbolInformation {}
export class InlayHint {}
export class CancellationError extends Error {}

// Used by vscode-languageclient when it runs (test/realClient.test.ts).
export class CodeActionKind {
  static readonly Empty = new CodeActionKind('');
  static readonly QuickFix = new CodeActionKind('quickfix');
  static readonly Refactor = new CodeActionKind('refactor');
  static readonly RefactorExtract = new CodeActionKind('refactor.extract');
  static readonly RefactorInline = new CodeActionKind('refactor.inline');
  static readonly RefactorRewrite = new CodeActionKind('refactor.rewrite');
  static readonly Source = new CodeActionKind('source');
  static readonly SourceOrganizeImports = new CodeActionKind('source.organizeImports');
  static readonly SourceFixAll = new CodeActionKind('source.fixAll');
  constructor(readonly value: string) {}
}

export enum LogLevel {
  Off = 0,
  Trace = 1,
  Debug = 2,
  Info = 3,
  Warning = 4,
  Error = 5,
}

/** An event nobody fires: the library subscribes to many that the tests never need. */
function silentEvent(): (listener: unknown) => Disposable {
  return () => new Disposable();
}

export class StatusBarItem {
  text = '';
  tooltip: string | undefined;
  command: string | undefined;
  name: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  disposed = false;
  constructor(
    readonly alignment: StatusBarAlignment,
    readonly priority: number | undefined,
  ) {}
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.disposed = true;
  }
}

export class LogOutputChannel {
  readonly lines: string[] = [];
  shown = false;
  logLevel = LogLevel.Info;
  private readonly logLevelChanged = new EventEmitter<number>();
  readonly onDidChangeLogLevel = this.logLevelChanged.event;
  constructor(readonly name: string) {}
  private log(level: string, message: string): void {
    this.lines.push(`[${level}] ${message}`);
  }
  trace(message: string): void {
    this.log('trace', message);
  }
  debug(message: string): void {
    this.log('debug', message);
  }
  info(message: string): void {
    this.log('info', message);
  }
  warn(message: string): void {
    this.log('warning', message);
  }
  error(message: string | Error): void {
    this.log('error', String(message));
  }
  append(value: string): void {
    this.lines.push(value);
  }
  appendLine(value: string): void {
    this.lines.push(value);
  }
  show(): void {
    this.shown = true;
  }
  hide(): void {
    this.shown = false;
  }
  clear(): void {
    this.lines.length = 0;
  }
  dispose(): void {}
}

export interface TextDocument {
  uri: Uri;
  languageId: string;
  fileName: string;
  version: number;
  isClosed: boolean;
  getText(): string;
}

export function document(fsPath: string, languageId: string, text = ''): TextDocument {
  return {
    uri: Uri.file(fsPath),
    languageId,
    fileName: fsPath,
    version: 1,
    isClosed: false,
    getText: () => text,
  };
}

export interface ShownMessage {
  level: 'info' | 'warning' | 'error';
  text: string;
  items: string[];
}

export interface ProgressRecord {
  title: string | undefined;
  location: ProgressLocation;
  reports: { message?: string; increment?: number }[];
  done: boolean;
}

/** Everything the stub records; replaced by reset(). */
export interface StubState {
  messages: ShownMessage[];
  /** What the next shown message resolves to (the button "clicked"); undefined = dismissed. */
  messageAnswer: string | undefined;
  commands: Map<string, (...args: unknown[]) => unknown>;
  executedCommands: { command: string; args: unknown[] }[];
  statusBarItems: StatusBarItem[];
  outputChannels: LogOutputChannel[];
  progress: ProgressRecord[];
  settings: Record<string, unknown>;
  textDocuments: TextDocument[];
  activeDocument: TextDocument | undefined;
  workspaceFolders: { uri: Uri; name: string; index: number }[] | undefined;
  configurationChanged: EventEmitter<{ affectsConfiguration(section: string): boolean }>;
  documentOpened: EventEmitter<TextDocument>;
}

function freshState(): StubState {
  return {
    messages: [],
    messageAnswer: undefined,
    commands: new Map(),
    executedCommands: [],
    statusBarItems: [],
    outputChannels: [],
    progress: [],
    settings: {},
    textDocuments: [],
    activeDocument: undefined,
    workspaceFolders: undefined,
    configurationChanged: new EventEmitter(),
    documentOpened: new EventEmitter(),
  };
}

export let state: StubState = freshState();

export function reset(): void {
  state = freshState();
}

/** Sets `assist.*` values (keys without the prefix) and fires the change event for them. */
export function changeSettings(values: Record<string, unknown>): void {
  Object.assign(state.settings, values);
  const changed = Object.keys(values).map((key) => `assist.${key}`);
  state.configurationChanged.fire({
    affectsConfiguration: (section: string) =>
      changed.some((key) => key === section || key.startsWith(`${section}.`)),
  });
}

export function openDocument(doc: TextDocument): void {
  state.textDocuments.push(doc);
  state.documentOpened.fire(doc);
}

function showMessage(level: ShownMessage['level']) {
  return (text: string, ...items: unknown[]): Promise<string | undefined> => {
    const labels = items.filter((item): item is string => typeof item === 'string');
    state.messages.push({ level, text, items: labels });
    const answer = state.messageAnswer;
    return Promise.resolve(answer !== undefined && labels.includes(answer) ? answer : undefined);
  };
}

export const window = {
  createStatusBarItem(alignment: StatusBarAlignment, priority?: number): StatusBarItem {
    const item = new StatusBarItem(alignment, priority);
    state.statusBarItems.push(item);
    return item;
  },
  createOutputChannel(name: string): LogOutputChannel {
    const channel = new LogOutputChannel(name);
    state.outputChannels.push(channel);
    return channel;
  },
  showInformationMessage: showMessage('info'),
  showWarningMessage: showMessage('warning'),
  showErrorMessage: showMessage('error'),
  withProgress<R>(
    options: { location: ProgressLocation; title?: string },
    task: (
      progress: { report(value: { message?: string; increment?: number }): void },
      token: { isCancellationRequested: boolean; onCancellationRequested: unknown },
    ) => Thenable<R>,
  ): Promise<R> {
    const record: ProgressRecord = {
      title: options.title,
      location: options.location,
      reports: [],
      done: false,
    };
    state.progress.push(record);
    const token = { isCancellationRequested: false, onCancellationRequested: silentEvent() };
    const result = task({ report: (value) => record.reports.push({ ...value }) }, token);
    return Promise.resolve(result).finally(() => {
      record.done = true;
    });
  },
  get activeTextEditor(): { document: TextDocument } | undefined {
    return state.activeDocument === undefined ? undefined : { document: state.activeDocument };
  },
  visibleTextEditors: [] as unknown[],
  onDidChangeVisibleTextEditors: silentEvent(),
  tabGroups: { all: [] as unknown[], onDidChangeTabs: silentEvent() },
};

export const workspace = {
  getConfiguration(section?: string) {
    const prefix = section ? `${section}.` : '';
    return {
      get<T>(key: string, fallback?: T): T | undefined {
        const full = prefix + key;
        const name = full.startsWith('assist.') ? full.slice('assist.'.length) : full;
        return name in state.settings ? (state.settings[name] as T) : fallback;
      },
      has(key: string): boolean {
        return key in state.settings;
      },
    };
  },
  onDidChangeConfiguration(listener: Listener<{ affectsConfiguration(section: string): boolean }>) {
    return state.configurationChanged.event(listener);
  },
  onDidOpenTextDocument(listener: Listener<TextDocument>) {
    return state.documentOpened.event(listener);
  },
  get textDocuments(): TextDocument[] {
    return state.textDocuments;
  },
  get workspaceFolders() {
    return state.workspaceFolders;
  },
  notebookDocuments: [] as unknown[],
  onDidChangeTextDocument: silentEvent(),
  onDidChangeWorkspaceFolders: silentEvent(),
  onWillSaveTextDocument: silentEvent(),
  onDidSaveTextDocument: silentEvent(),
  onDidCloseTextDocument: silentEvent(),
  onDidCreateFiles: silentEvent(),
  onDidRenameFiles: silentEvent(),
  onDidDeleteFiles: silentEvent(),
  onWillCreateFiles: silentEvent(),
  onWillRenameFiles: silentEvent(),
  onWillDeleteFiles: silentEvent(),
};

/** A document selector as vscode-languageclient builds it: filters of scheme and language. */
export const languages = {
  match(selector: { scheme?: string; language?: string }[], doc: TextDocument): number {
    const hit = selector.some(
      (filter) =>
        (filter.scheme === undefined || filter.scheme === doc.uri.scheme) &&
        (filter.language === undefined || filter.language === doc.languageId),
    );
    return hit ? 10 : 0;
  },
  registerCompletionItemProvider: () => new Disposable(),
  registerInlineCompletionItemProvider: () => new Disposable(),
  registerCodeActionsProvider: () => new Disposable(),
};

export const env = { language: 'en', appName: 'stub', machineId: 'stub', sessionId: 'stub' };
export const version = '1.91.0';

export const commands = {
  registerCommand(command: string, callback: (...args: unknown[]) => unknown): Disposable {
    // As in VS Code: a second registration of one id is an error (languageclient relies on it).
    if (state.commands.has(command)) {
      throw new Error(`command '${command}' already exists`);
    }
    state.commands.set(command, callback);
    return new Disposable(() => state.commands.delete(command));
  },
  executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    state.executedCommands.push({ command, args });
    const callback = state.commands.get(command);
    return Promise.resolve(callback === undefined ? undefined : callback(...args));
  },
};
