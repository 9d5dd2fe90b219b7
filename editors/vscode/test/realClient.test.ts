/**
 * The extension with the real vscode-languageclient (not a fake) against a scripted server
 * process: the wiring the unit tests cannot see — initializationOptions on the wire, the custom
 * notifications, the library registering the server's command ids next to ours, the fix command
 * round trip, settings pushed on change, and a clean shutdown; and a server that cannot start
 * producing exactly one message.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { DEFAULT_OPTIONS } from '../src/config';
import { activate, deactivate } from '../src/extension';
import * as vscode from './vscodeStub';

const posix = process.platform !== 'win32';
let dir = '';

beforeEach(() => {
  vscode.reset();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assist-real-client-'));
  process.env.ASSIST_SCRIPTED_LOG = path.join(dir, 'server.log');
});

afterEach(async () => {
  await deactivate();
  delete process.env.ASSIST_SCRIPTED_LOG;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** An executable named assist that runs `script`, as pip's console script would run assist. */
function installServer(script: string): string {
  const executable = path.join(dir, 'assist');
  fs.writeFileSync(executable, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  return executable;
}

function received(): { method?: string; id?: unknown; params?: any; result?: any }[] {
  const log = process.env.ASSIST_SCRIPTED_LOG!;
  if (!fs.existsSync(log)) {
    return [];
  }
  return fs.readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      assert.fail(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function activateExtension(): void {
  const context = { subscriptions: [] } as unknown as import('vscode').ExtensionContext;
  activate(context);
}

test('the real client runs the server, renders its notifications and fixes a file', { skip: !posix }, async () => {
  const server = path.join(__dirname, 'scriptedServer.js');
  vscode.state.settings.serverPath = installServer(`exec "${process.execPath}" "${server}" "$@"`);
  vscode.state.settings.maxTokens = 48;
  const doc = vscode.document(path.join(dir, 'app.py'), 'python', 'x = (\n');
  vscode.state.textDocuments.push(doc);
  vscode.state.activeDocument = doc;

  activateExtension();
  const item = () => vscode.state.statusBarItems[0];
  await until('the ready status', () => item()?.text === '$(check) assist 42 ms');

  const initialize = received().find((message) => message.method === 'initialize');
  assert.deepEqual(initialize?.params.initializationOptions, { ...DEFAULT_OPTIONS, maxTokens: 48 });
  assert.ok(received().some((message) => message.method === 'textDocument/didOpen'));
  await until('the configuration answer', () => received().some((message) => message.id === 'cfg-1'));
  const answer = received().find((message) => message.id === 'cfg-1');
  assert.deepEqual(answer?.result, [{ ...DEFAULT_OPTIONS, maxTokens: 48 }]);

  // The library registered the server's commands; ours have other ids, so nothing clashed.
  for (const command of ['assist.fixFile', 'assist.feedback', 'assist.fixActiveFile']) {
    assert.ok(vscode.state.commands.has(command), command);
  }

  await vscode.commands.executeCommand('assist.fixActiveFile');
  const request = received().find((message) => message.method === 'workspace/executeCommand');
  assert.deepEqual(request?.params, { command: 'assist.fixFile', arguments: [doc.uri.toString()] });
  assert.deepEqual(vscode.state.messages, [{ level: 'info', text: 'assist: fixed 1 error', items: [] }]);
  await until('the fix progress to close', () => vscode.state.progress[0]?.done === true);
  assert.deepEqual(
    vscode.state.progress[0]?.reports.map((report) => report.message),
    ['skeleton · 5 ms', 'logic · 9 ms', 'final · 12 ms'],
  );

  vscode.changeSettings({ debounceMs: 150 });
  await until('the settings push', () =>
    received().some((message) => message.method === 'workspace/didChangeConfiguration'),
  );
  const change = received().find((message) => message.method === 'workspace/didChangeConfiguration');
  assert.deepEqual(change?.params, { settings: { assist: { ...DEFAULT_OPTIONS, maxTokens: 48, debounceMs: 150 } } });

  await deactivate();
  // `exit` is a notification: the client does not wait for the server to read it.
  await until('shutdown and exit', () => {
    const methods = received().map((message) => message.method);
    return methods.includes('shutdown') && methods.includes('exit');
  });
});

test('a server that exits at once gets one message from the extension, none from the library', { skip: !posix }, async () => {
  vscode.state.settings.serverPath = installServer('echo "assist: unknown command lsp" >&2\nexit 2');
  vscode.state.textDocuments.push(vscode.document(path.join(dir, 'app.py'), 'python'));

  activateExtension();
  await until('the failure', () => vscode.state.statusBarItems[0]?.text === '$(error) assist unavailable');
  // Give the library time to show anything it still would.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(vscode.state.messages.length, 1, JSON.stringify(vscode.state.messages));
  assert.match(vscode.state.messages[0]?.text ?? '', /is not running.*pip install assist/);
  assert.ok(
    vscode.state.outputChannels[0]?.lines.some((line) => line.includes('unknown command lsp')),
    'the server stderr is in the output',
  );
});
