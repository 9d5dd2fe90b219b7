/**
 * The real language client: vscode-languageclient's LanguageClient running `assist lsp` over
 * stdio. This is the only module that knows the library; the rest of the extension sees the
 * narrow AssistClient interface, which tests implement with a fake.
 */
import type * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  type DocumentSelector,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { configurationValue, type InitializationOptions } from './config';
import { RestartBudget } from './server';

/** What the extension uses of a language client. */
export interface AssistClient {
  start(): Promise<void>;
  stop(): Promise<void>;
  sendRequest(method: string, params: unknown): Promise<unknown>;
  sendNotification(method: string, params: unknown): Promise<void>;
  onNotification(method: string, handler: (params: unknown) => void): vscode.Disposable;
}

export interface ClientSpec {
  /** The resolved executable (an absolute path where it was found on PATH). */
  command: string;
  args: string[];
  cwd: string | undefined;
  languages: readonly string[];
  /** Read at every (re)start and for `workspace/configuration`, so both see the latest settings. */
  options(): InitializationOptions;
  outputChannel: vscode.LogOutputChannel;
  /** The server could not be kept running: shown once, with the reason. */
  onServerGone(detail: string): void;
}

export type ClientFactory = (spec: ClientSpec) => AssistClient;

export const CLIENT_ID = 'assist';
const CLIENT_NAME = 'assist';

export function documentSelector(languages: readonly string[]): DocumentSelector {
  // Unsaved buffers too: the server gets the text over LSP and never needs the file on disk.
  return languages.flatMap((language) => [
    { scheme: 'file', language },
    { scheme: 'untitled', language },
  ]);
}

export function serverOptions(spec: ClientSpec): ServerOptions {
  // No `transport`: stdio is the default for an executable, and `TransportKind.stdio` would make
  // the library append `--stdio`, which `assist lsp` rejects as an unknown argument.
  return {
    command: spec.command,
    args: spec.args,
    options: spec.cwd === undefined ? {} : { cwd: spec.cwd },
  };
}

/**
 * @param isRunning whether the server got through initialization: one that exits before that
 *   is not restarted (it would fail the same way, once per restart) but reported once.
 */
export function clientOptions(spec: ClientSpec, isRunning: () => boolean): LanguageClientOptions {
  const restarts = new RestartBudget();
  return {
    documentSelector: documentSelector(spec.languages),
    initializationOptions: () => spec.options(),
    outputChannel: spec.outputChannel,
    // Settings changes are pushed by the extension itself (with checked values), not by the
    // library's raw `synchronize.configurationSection` copy of settings.json.
    initializationFailedHandler: (error) => {
      spec.onServerGone(describeError(error));
      return false;
    },
    errorHandler: {
      error: (_error, _message, count) => ({
        action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
      }),
      closed: () => {
        if (!isRunning()) {
          spec.onServerGone('it exited during startup');
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        if (restarts.allowRestart()) {
          return { action: CloseAction.Restart, handled: true };
        }
        spec.onServerGone('it exited several times in a row');
        // handled: the extension shows its own message with the install hint.
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const answers: unknown = await next(params, token);
          if (!Array.isArray(answers)) {
            return answers as never;
          }
          const options = spec.options();
          return params.items.map((item, index) => {
            const ours = configurationValue(item.section, options);
            return ours === undefined ? answers[index] : ours;
          });
        },
      },
    },
  };
}

/**
 * LanguageClient, except that it shows no error notification of its own while the server is not
 * running: a start that fails reaches the extension (start() rejects, or onServerGone), which
 * shows one message with the install hint. Left alone, the library shows "couldn't create
 * connection to server" and "Restarting server failed" with forced notifications, one per try.
 * Everything is still logged to the output.
 */
class AssistLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    super.error(message, data, this.state === State.Running ? showNotification : false);
  }
}

export const createLanguageClient: ClientFactory = (spec) => {
  let client: LanguageClient | undefined = undefined;
  const isRunning = () => client?.state === State.Running;
  client = new AssistLanguageClient(
    CLIENT_ID,
    CLIENT_NAME,
    serverOptions(spec),
    clientOptions(spec, isRunning),
  );
  return client;
};

function describeError(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  return typeof error === 'string' ? error : '';
}
