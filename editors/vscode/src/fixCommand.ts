/**
 * "Assist: Fix File": asks the server to fix the active document through
 * `workspace/executeCommand` (`assist.fixFile` with the document's URI) and shows its answer.
 *
 * The palette command has its own id (`assist.fixActiveFile`) because vscode-languageclient
 * registers every command the server lists in `executeCommandProvider` (so `assist.fixFile` itself)
 * as a VS Code command; registering the same id here would fail with "command already exists".
 */
import * as vscode from 'vscode';
import { FIX_FILE_COMMAND, parseFixResult } from './protocol';

export const FIX_ACTIVE_FILE_COMMAND = 'assist.fixActiveFile';

/** The part of the language client the command needs. */
export interface RequestSender {
  sendRequest(method: string, params: unknown): Promise<unknown>;
}

export type FixMessage = { level: 'info' | 'warning' | 'error'; text: string };

/** What to tell the user about the server's answer to `assist.fixFile`. */
export function describeFixResult(raw: unknown): FixMessage {
  const result = parseFixResult(raw);
  if (result === undefined) {
    return { level: 'error', text: 'assist: the server gave no fix result.' };
  }
  const fallback = !result.changed
    ? result.verified
      ? 'nothing to fix.'
      : 'no verified fix was found; the file is unchanged.'
    : result.verified
      ? 'fixed the file.'
      : 'changed the file, but the fix was not verified.';
  const text = `assist: ${result.message.trim() || fallback}`;
  // Only an answer the server checked is plain news; anything else deserves a second look.
  return { level: result.verified ? 'info' : 'warning', text };
}

function showFixMessage(message: FixMessage): void {
  switch (message.level) {
    case 'info':
      void vscode.window.showInformationMessage(message.text);
      break;
    case 'warning':
      void vscode.window.showWarningMessage(message.text);
      break;
    case 'error':
      void vscode.window.showErrorMessage(message.text);
      break;
  }
}

export interface FixCommandDeps {
  /** The languages the server gets documents for; a fix elsewhere would find no document. */
  languages(): readonly string[];
  /** The running client, started on demand; undefined when the server cannot run. */
  client(): Promise<RequestSender | undefined>;
}

/**
 * Runs the fix for the active editor's document; resolves with what was shown (for tests), or
 * undefined when nothing was (the server could not start, which was reported already).
 */
export async function fixActiveFile(deps: FixCommandDeps): Promise<FixMessage | undefined> {
  const message = await runFix(deps);
  if (message !== undefined) {
    showFixMessage(message);
  }
  return message;
}

async function runFix(deps: FixCommandDeps): Promise<FixMessage | undefined> {
  const document = vscode.window.activeTextEditor?.document;
  if (document === undefined) {
    return { level: 'warning', text: 'assist: open a file to fix it.' };
  }
  if (!deps.languages().includes(document.languageId)) {
    return {
      level: 'warning',
      text: `assist: ${document.languageId} files are not handled (see the "assist.languages" setting).`,
    };
  }
  const client = await deps.client();
  if (client === undefined) {
    // The reason (not installed, keeps exiting) was shown when the start failed; once is enough.
    return undefined;
  }
  try {
    const result = await client.sendRequest('workspace/executeCommand', {
      command: FIX_FILE_COMMAND,
      arguments: [document.uri.toString()],
    });
    return describeFixResult(result);
  } catch (error) {
    return { level: 'error', text: `assist: the fix failed: ${errorText(error)}` };
  }
}

export function errorText(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  return typeof error === 'string' ? error : JSON.stringify(error);
}
