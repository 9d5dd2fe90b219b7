/**
 * How the `assist lsp` process is found and kept running: the command from `assist.serverPath`,
 * looked up before starting so a missing install gets one clear message with the install hint
 * instead of the language client's generic "couldn't create connection", and a restart budget so
 * a server that keeps exiting is given up on with the same kind of message.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const INSTALL_HINT =
  'Install it with "pip install assist" (in an assist checkout, "make run" puts it in .venv/bin), ' +
  'or set "assist.serverPath" to the assist executable.';

export function serverMissingMessage(command: string): string {
  return `assist: the language server command "${command}" was not found. ${INSTALL_HINT}`;
}

export function serverFailedMessage(command: string, detail: string): string {
  const reason = detail ? ` (${detail})` : '';
  return (
    `assist: the language server "${command} lsp" is not running${reason}. It needs an assist ` +
    `version with the "lsp" command. ${INSTALL_HINT} The assist output has the server's log.`
  );
}

export interface PathContext {
  home: string;
  /** The first workspace folder's path, if a folder is open. */
  workspaceFolder: string | undefined;
}

/**
 * `~` and `${workspaceFolder}` expanded, and a relative path with a directory in it (such as
 * `.venv/bin/assist`) taken from the workspace folder, as a user writing it in settings means.
 * A bare name stays as it is: it is looked up on PATH.
 */
export function expandServerPath(command: string, context: PathContext): string {
  let expanded = command;
  if (context.workspaceFolder !== undefined) {
    expanded = expanded.split('${workspaceFolder}').join(context.workspaceFolder);
  }
  if (expanded === '~' || expanded.startsWith('~/') || expanded.startsWith('~\\')) {
    expanded = path.join(context.home, expanded.slice(1));
  }
  const hasDirectory = expanded.includes('/') || expanded.includes('\\');
  if (hasDirectory && !path.isAbsolute(expanded) && context.workspaceFolder !== undefined) {
    expanded = path.join(context.workspaceFolder, expanded);
  }
  return expanded;
}

export interface LookupEnvironment {
  PATH?: string;
  PATHEXT?: string;
}

export function isExecutableFile(candidate: string): boolean {
  try {
    if (!fs.statSync(candidate).isFile()) {
      return false;
    }
    fs.accessSync(candidate, process.platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The executable a command names, as a shell would find it, or undefined. A command with a
 * directory in it is checked as a path; a bare name is searched on PATH (with PATHEXT on Windows).
 */
export function findExecutable(
  command: string,
  env: LookupEnvironment,
  platform: NodeJS.Platform = process.platform,
  isExecutable: (candidate: string) => boolean = isExecutableFile,
): string | undefined {
  const windows = platform === 'win32';
  const pathApi = windows ? path.win32 : path.posix;
  const extensions = windows
    ? ['', ...(env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter((ext) => ext !== '')]
    : [''];
  const withExtensions = (base: string): string | undefined =>
    extensions.map((ext) => base + ext).find((candidate) => isExecutable(candidate));

  if (command.includes('/') || (windows && command.includes('\\'))) {
    return withExtensions(command);
  }
  const separator = windows ? ';' : ':';
  for (const directory of (env.PATH ?? '').split(separator)) {
    if (directory === '') {
      continue;
    }
    const found = withExtensions(pathApi.join(directory, command));
    if (found !== undefined) {
      return found;
    }
  }
  return undefined;
}

/**
 * Whether a server that exited should be started again: yes up to `maxRestarts` times within
 * `windowMs`, then no, so a server that cannot run is reported once instead of looping.
 */
export class RestartBudget {
  private readonly exits: number[] = [];

  constructor(
    private readonly maxRestarts = 3,
    private readonly windowMs = 3 * 60_000,
  ) {}

  allowRestart(now: number = Date.now()): boolean {
    this.exits.push(now);
    while (this.exits.length > 0 && now - this.exits[0]! > this.windowMs) {
      this.exits.shift();
    }
    return this.exits.length <= this.maxRestarts;
  }
}
