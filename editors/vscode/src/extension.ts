/**
 * The extension's entry point: starts `assist lsp` for the documents of the configured languages
 * and wires its notifications to the status bar and the fix progress, its settings to the server,
 * and the "Assist" commands to the palette.
 *
 * The language client and the executable lookup come in as seams (ExtensionSeams), so activation
 * is tested with a fake client instead of mocks of vscode-languageclient's internals.
 */
import * as os from 'node:os';
import * as vscode from 'vscode';
import { readSettings, RESTART_KEYS, type ExtensionSettings } from './config';
import { errorText, FIX_ACTIVE_FILE_COMMAND, fixActiveFile } from './fixCommand';
import { createLanguageClient, type AssistClient, type ClientFactory } from './languageClient';
import { parseStage, parseStatus, STAGE_NOTIFICATION, STATUS_NOTIFICATION } from './protocol';
import {
  expandServerPath,
  findExecutable,
  serverFailedMessage,
  serverMissingMessage,
} from './server';
import { FixProgressView } from './stages';
import {
  renderCompletionStage,
  renderServerProblem,
  renderServerStarting,
  renderStatus,
  SHOW_OUTPUT_COMMAND,
  StatusBarView,
} from './status';

export const RESTART_COMMAND = 'assist.restartServer';

export interface ExtensionSeams {
  createClient: ClientFactory;
  /** The executable for `assist.serverPath`, or undefined when there is none. */
  findServer(serverPath: string): string | undefined;
}

function workspaceFolderPath(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

export const defaultSeams: ExtensionSeams = {
  createClient: createLanguageClient,
  findServer: (serverPath) =>
    findExecutable(
      expandServerPath(serverPath, { home: os.homedir(), workspaceFolder: workspaceFolderPath() }),
      process.env,
    ),
};

export class AssistExtension implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  private readonly statusBar: StatusBarView;
  private readonly fixProgress: FixProgressView;
  private readonly disposables: vscode.Disposable[] = [];
  /** The notification handlers of the current client, dropped with it. */
  private clientDisposables: vscode.Disposable[] = [];
  private settings: ExtensionSettings;
  private shownWarnings = '';
  private client: AssistClient | undefined;
  private starting: Promise<AssistClient | undefined> | undefined;
  /** Bumped on every (re)start, so late callbacks from an old client are ignored. */
  private generation = 0;
  private failedGeneration = -1;

  constructor(private readonly seams: ExtensionSeams) {
    this.output = vscode.window.createOutputChannel('assist', { log: true });
    this.statusBar = new StatusBarView();
    this.fixProgress = new FixProgressView();
    this.settings = this.loadSettings();
    this.disposables.push(
      vscode.commands.registerCommand(FIX_ACTIVE_FILE_COMMAND, () =>
        fixActiveFile({
          languages: () => this.settings.languages,
          // The user asked for a fix: retry a server that failed before (it may be installed now).
          client: () => this.ensureStarted(true),
        }),
      ),
      vscode.commands.registerCommand(SHOW_OUTPUT_COMMAND, () => this.output.show(true)),
      vscode.commands.registerCommand(RESTART_COMMAND, () => this.restart()),
      vscode.workspace.onDidChangeConfiguration((event) => this.onSettingsChanged(event)),
      vscode.workspace.onDidOpenTextDocument((document) => {
        if (this.handles(document)) {
          void this.ensureStarted();
        }
      }),
    );
  }

  /** Starts the server now if a document it serves is open; otherwise on the first one. */
  startIfNeeded(): Promise<AssistClient | undefined> {
    return vscode.workspace.textDocuments.some((document) => this.handles(document))
      ? this.ensureStarted()
      : Promise.resolve(undefined);
  }

  /** The running client, starting it if needed; undefined when it cannot run (already reported). */
  ensureStarted(retryFailed = false): Promise<AssistClient | undefined> {
    if (this.starting !== undefined && !(retryFailed && this.failedGeneration === this.generation)) {
      return this.starting;
    }
    if (this.starting !== undefined) {
      return this.restart();
    }
    this.starting = this.start(this.generation);
    return this.starting;
  }

  async restart(): Promise<AssistClient | undefined> {
    await this.stop();
    return this.ensureStarted();
  }

  private handles(document: vscode.TextDocument): boolean {
    return (
      (document.uri.scheme === 'file' || document.uri.scheme === 'untitled') &&
      this.settings.languages.includes(document.languageId)
    );
  }

  private async start(generation: number): Promise<AssistClient | undefined> {
    const { serverPath, serverArgs, languages } = this.settings;
    const command = this.seams.findServer(serverPath);
    if (command === undefined) {
      this.reportServerProblem(generation, serverMissingMessage(serverPath));
      return undefined;
    }
    this.statusBar.show(renderServerStarting());
    this.output.info(`starting ${command} lsp ${serverArgs.join(' ')}`.trimEnd());
    const client = this.seams.createClient({
      command,
      args: ['lsp', ...serverArgs],
      cwd: workspaceFolderPath(),
      languages,
      options: () => this.settings.initializationOptions,
      outputChannel: this.output,
      onServerGone: (detail) =>
        this.reportServerProblem(generation, serverFailedMessage(serverPath, detail)),
    });
    this.client = client;
    // Registered before start() so no notification sent during initialization is lost.
    this.clientDisposables.push(
      client.onNotification(STAGE_NOTIFICATION, (params) => this.onStage(params)),
      client.onNotification(STATUS_NOTIFICATION, (params) => this.onStatus(params)),
    );
    try {
      await client.start();
      this.askForGhostText();
      return client;
    } catch (error) {
      this.reportServerProblem(generation, serverFailedMessage(serverPath, errorText(error)));
      if (this.client === client) {
        this.client = undefined;
      }
      return undefined;
    }
  }

  /**
   * VS Code asks for inline suggestions as the programmer types; what was typed while the server
   * was starting found no provider, so once it is ready the active editor (one of ours) asks.
   */
  private askForGhostText(): void {
    const document = vscode.window.activeTextEditor?.document;
    if (document !== undefined && this.handles(document)) {
      void vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
    }
  }

  /** One message per failed start, whichever of the client's failure paths reports it first. */
  private reportServerProblem(generation: number, message: string): void {
    if (generation !== this.generation || this.failedGeneration === generation) {
      return;
    }
    this.failedGeneration = generation;
    this.output.error(message);
    this.statusBar.show(renderServerProblem(message));
    void vscode.window
      .showErrorMessage(message, 'Retry', 'Open Settings', 'Show Output')
      .then((choice) => {
        if (choice === 'Retry') {
          void this.restart();
        } else if (choice === 'Open Settings') {
          void vscode.commands.executeCommand('workbench.action.openSettings', 'assist.serverPath');
        } else if (choice === 'Show Output') {
          this.output.show(true);
        }
      });
  }

  private onStage(raw: unknown): void {
    const stage = parseStage(raw);
    if (stage === undefined) {
      this.output.warn(`ignored a malformed ${STAGE_NOTIFICATION}: ${JSON.stringify(raw)}`);
      return;
    }
    if (stage.kind === 'fix') {
      this.fixProgress.handle(stage);
    } else {
      this.statusBar.show(renderCompletionStage(stage));
    }
  }

  private onStatus(raw: unknown): void {
    const status = parseStatus(raw);
    if (status === undefined) {
      this.output.warn(`ignored a malformed ${STATUS_NOTIFICATION}: ${JSON.stringify(raw)}`);
      return;
    }
    if (status.state === 'unavailable') {
      this.output.warn(`daemon unavailable: ${status.message ?? status.daemonUrl}`);
    }
    this.statusBar.show(renderStatus(status));
  }

  private loadSettings(): ExtensionSettings {
    const { settings, warnings } = readSettings(vscode.workspace.getConfiguration('assist'));
    for (const warning of warnings) {
      this.output.warn(warning);
    }
    // The same bad value is reported once, not again on every unrelated settings change.
    const key = warnings.join('\n');
    if (warnings.length > 0 && key !== this.shownWarnings) {
      const more = warnings.length > 1 ? ` (and ${warnings.length - 1} more in the output)` : '';
      void vscode.window.showWarningMessage(`${warnings[0]}${more}`);
    }
    this.shownWarnings = key;
    return settings;
  }

  private onSettingsChanged(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration('assist')) {
      return;
    }
    this.settings = this.loadSettings();
    if (RESTART_KEYS.some((key) => event.affectsConfiguration(`assist.${key}`))) {
      // A new command or document selector needs a new client.
      if (this.starting !== undefined) {
        void this.restart();
      } else {
        void this.startIfNeeded();
      }
      return;
    }
    const client = this.client;
    if (client !== undefined) {
      // The `assist` section, checked, in the shape the library's configurationSection sync uses.
      client
        .sendNotification('workspace/didChangeConfiguration', {
          settings: { assist: { ...this.settings.initializationOptions } },
        })
        .catch((error: unknown) => this.output.warn(`sending settings: ${errorText(error)}`));
    }
  }

  /** Stops the server; the next document or command starts a new one. */
  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.starting = undefined;
    this.generation += 1;
    this.fixProgress.dispose();
    for (const disposable of this.clientDisposables.splice(0)) {
      disposable.dispose();
    }
    if (client !== undefined) {
      await client.stop().catch((error: unknown) => this.output.warn(`stopping: ${errorText(error)}`));
    }
  }

  dispose(): void {
    void this.stop();
    this.fixProgress.dispose();
    this.statusBar.dispose();
    for (const disposable of this.disposables.splice(0)) {
      disposable.dispose();
    }
    this.output.dispose();
  }
}

let current: AssistExtension | undefined;

/** The extension's API value is the controller itself; tests (and only tests) use it. */
export function activate(
  context: vscode.ExtensionContext,
  seams: ExtensionSeams = defaultSeams,
): AssistExtension {
  const extension = new AssistExtension(seams);
  context.subscriptions.push(extension);
  current = extension;
  void extension.startIfNeeded();
  return extension;
}

export async function deactivate(): Promise<void> {
  // Awaited by VS Code, so the server gets its shutdown/exit instead of being killed.
  await current?.stop();
  current = undefined;
}
