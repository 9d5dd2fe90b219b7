import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { DEFAULT_LANGUAGES, DEFAULT_OPTIONS } from '../src/config';
import { activate, deactivate, type AssistExtension, type ExtensionSeams } from '../src/extension';
import type { ClientSpec } from '../src/languageClient';
import { FakeClient } from './fakeClient';
import * as vscode from './vscodeStub';

interface Harness {
  extension: AssistExtension;
  clients: FakeClient[];
  subscriptions: { dispose(): unknown }[];
  lookups: string[];
}

/** Activates the extension with a fake client; `server` is what the lookup finds (null: none). */
function activateWith(
  server: string | null = '/usr/bin/assist',
  onClient?: (client: FakeClient) => void,
): Harness {
  const clients: FakeClient[] = [];
  const lookups: string[] = [];
  const seams: ExtensionSeams = {
    createClient: (spec: ClientSpec) => {
      const client = new FakeClient(spec);
      onClient?.(client);
      clients.push(client);
      return client;
    },
    findServer: (serverPath) => {
      lookups.push(serverPath);
      return server ?? undefined;
    },
  };
  const subscriptions: { dispose(): unknown }[] = [];
  const context = { subscriptions } as unknown as import('vscode').ExtensionContext;
  const extension = activate(context, seams);
  return { extension, clients, subscriptions, lookups };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

let harness: Harness | undefined;

beforeEach(() => vscode.reset());
afterEach(async () => {
  await deactivate();
  for (const item of harness?.subscriptions ?? []) {
    item.dispose();
  }
  harness = undefined;
});

test('activation registers the commands and, with a Python file open, starts the client', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  vscode.state.workspaceFolders = [{ uri: vscode.Uri.file('/w'), name: 'w', index: 0 }];
  harness = activateWith();
  await settle();

  for (const command of ['assist.fixActiveFile', 'assist.showOutput', 'assist.restartServer']) {
    assert.ok(vscode.state.commands.has(command), command);
  }
  // The server's own command ids are left for vscode-languageclient to register.
  assert.ok(!vscode.state.commands.has('assist.fixFile'));
  assert.ok(!vscode.state.commands.has('assist.feedback'));

  assert.equal(harness.clients.length, 1);
  const client = harness.clients[0]!;
  assert.equal(client.started, 1);
  assert.equal(client.spec.command, '/usr/bin/assist');
  assert.deepEqual(client.spec.args, ['lsp']);
  assert.equal(client.spec.cwd, '/w');
  assert.deepEqual(client.spec.languages, DEFAULT_LANGUAGES);
  assert.deepEqual(client.spec.options(), DEFAULT_OPTIONS);
  assert.equal(harness.subscriptions.length, 1);

  const [item] = vscode.state.statusBarItems;
  assert.ok(item);
  assert.equal(item.visible, true);
  assert.equal(item.text, '$(sync~spin) assist starting');
  assert.equal(item.command, 'assist.showOutput');
  assert.deepEqual(vscode.state.messages, []);
});

test('the status bar follows assist/status and completion stages; clicking shows the output', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  harness = activateWith();
  await settle();
  const client = harness.clients[0]!;
  const item = vscode.state.statusBarItems[0]!;

  client.notify('assist/status', { state: 'ready', daemonUrl: 'http://127.0.0.1:8765', model: 'm', backend: 'CPU', lastLatencyMs: 42, message: null });
  assert.equal(item.text, '$(check) assist 42 ms');

  client.notify('assist/stage', { requestId: 'c1', uri: 'file:///w/app.py', kind: 'complete', stage: 'logic', text: 'x', elapsedMs: 80, ok: true, reason: null });
  assert.equal(item.text, '$(sync~spin) assist logic 80 ms');

  client.notify('assist/stage', { requestId: 'c1', uri: 'file:///w/app.py', kind: 'complete', stage: 'errors', text: 'x', elapsedMs: 900, ok: false, reason: 'deadline' });
  assert.equal(item.text, '$(warning) assist errors 900 ms');
  assert.match(String(item.tooltip), /reason: deadline/);

  client.notify('assist/status', { state: 'unavailable', daemonUrl: 'http://127.0.0.1:8765', model: null, backend: null, lastLatencyMs: null, message: 'connection refused' });
  assert.equal(item.text, '$(error) assist unavailable');
  assert.match(String(item.tooltip), /connection refused/);
  assert.equal((item.backgroundColor as vscode.ThemeColor | undefined)?.id, 'statusBarItem.errorBackground');

  // A malformed notification is logged, not rendered.
  client.notify('assist/status', { state: 'weird' });
  assert.equal(item.text, '$(error) assist unavailable');
  assert.ok(vscode.state.outputChannels[0]?.lines.some((line) => line.includes('malformed assist/status')));

  await vscode.commands.executeCommand('assist.showOutput');
  assert.equal(vscode.state.outputChannels[0]?.shown, true);
});

test('fix stages open a progress notification that ends at final', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  harness = activateWith();
  await settle();
  const client = harness.clients[0]!;
  const base = { requestId: 'f1', uri: 'file:///w/app.py', kind: 'fix', text: '', ok: true, reason: null };
  client.notify('assist/stage', { ...base, stage: 'skeleton', elapsedMs: 10 });
  client.notify('assist/stage', { ...base, stage: 'final', elapsedMs: 400 });
  await settle();
  const [record] = vscode.state.progress;
  assert.equal(record?.title, 'assist: fixing app.py');
  assert.deepEqual(record?.reports.map((report) => report.message), ['skeleton · 10 ms', 'final · 400 ms']);
  assert.equal(record?.done, true);
});

test('Assist: Fix File sends assist.fixFile for the active document through the client', async () => {
  const doc = vscode.document('/w/broken.py', 'python');
  vscode.state.textDocuments.push(doc);
  vscode.state.activeDocument = doc;
  harness = activateWith('/usr/bin/assist', (client) => {
    client.answer = () => Promise.resolve({ changed: true, verified: true, message: 'fixed' });
  });
  await vscode.commands.executeCommand('assist.fixActiveFile');
  const client = harness.clients[0]!;
  assert.deepEqual(client.requests, [
    { method: 'workspace/executeCommand', params: { command: 'assist.fixFile', arguments: ['file:///w/broken.py'] } },
  ]);
  assert.deepEqual(vscode.state.messages, [{ level: 'info', text: 'assist: fixed', items: [] }]);
});

test('no document of a served language: nothing starts until one opens', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/README.md', 'markdown'));
  harness = activateWith();
  await settle();
  assert.equal(harness.clients.length, 0);
  assert.equal(vscode.state.statusBarItems[0]?.visible, false);
  vscode.openDocument(vscode.document('/w/main.go', 'go'));
  await settle();
  assert.equal(harness.clients.length, 1);
  vscode.openDocument(vscode.document('/w/util.go', 'go'));
  await settle();
  assert.equal(harness.clients.length, 1);
});

test('server not installed: one clear error with the install hint, no client, no crash', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  harness = activateWith(null);
  await settle();
  assert.equal(harness.clients.length, 0);
  assert.equal(vscode.state.messages.length, 1);
  const [message] = vscode.state.messages;
  assert.equal(message?.level, 'error');
  assert.match(message?.text ?? '', /"assist" was not found.*pip install assist.*make run/);
  assert.deepEqual(message?.items, ['Retry', 'Open Settings', 'Show Output']);
  const item = vscode.state.statusBarItems[0]!;
  assert.equal(item.text, '$(error) assist unavailable');
  assert.match(String(item.tooltip), /pip install assist/);

  // More documents do not repeat the message; asking for a fix looks again and says it again.
  vscode.openDocument(vscode.document('/w/other.py', 'python'));
  await settle();
  assert.equal(vscode.state.messages.length, 1);
  vscode.state.activeDocument = vscode.document('/w/app.py', 'python');
  await vscode.commands.executeCommand('assist.fixActiveFile');
  assert.equal(vscode.state.messages.length, 2);
  assert.equal(harness.lookups.length, 2);
});

test('once the server is ready, the active editor asks for ghost text (typing may have come first)', async () => {
  const typedIn = vscode.document('/w/app.py', 'python');
  vscode.state.textDocuments.push(typedIn);
  vscode.state.activeDocument = typedIn;
  harness = activateWith();
  await settle();
  assert.equal(harness.clients[0]!.started, 1);
  assert.deepEqual(vscode.state.executedCommands, [
    { command: 'editor.action.inlineSuggest.trigger', args: [] },
  ]);
});

test('a ready server does not ask for ghost text in an editor of another language', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  vscode.state.activeDocument = vscode.document('/w/notes.txt', 'plaintext');
  harness = activateWith();
  await settle();
  assert.equal(harness.clients[0]!.started, 1);
  assert.deepEqual(vscode.state.executedCommands, []);
});

test('"Open Settings" on the not-installed error opens the serverPath setting', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  vscode.state.messageAnswer = 'Open Settings';
  harness = activateWith(null);
  await settle();
  assert.deepEqual(vscode.state.executedCommands, [
    { command: 'workbench.action.openSettings', args: ['assist.serverPath'] },
  ]);
});

test('a server that fails to start is reported once, with the reason', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  harness = activateWith('/usr/bin/assist', (client) => {
    client.startResult = () => {
      // The library reports through both paths; the user sees one message.
      client.spec.onServerGone('it exited several times in a row');
      return Promise.reject(new Error('Pending response rejected'));
    };
  });
  await settle();
  const errors = vscode.state.messages.filter((message) => message.level === 'error');
  assert.equal(errors.length, 1);
  assert.match(errors[0]?.text ?? '', /"assist lsp" is not running \(it exited several times in a row\)/);
  assert.equal(vscode.state.statusBarItems[0]?.text, '$(error) assist unavailable');
});

test('changed settings are pushed to the server, checked, as the assist section', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  harness = activateWith();
  await settle();
  const client = harness.clients[0]!;
  vscode.changeSettings({ debounceMs: 150, maxTokens: 'lots' });
  await settle();
  assert.deepEqual(client.notifications, [
    {
      method: 'workspace/didChangeConfiguration',
      params: { settings: { assist: { ...DEFAULT_OPTIONS, debounceMs: 150 } } },
    },
  ]);
  assert.deepEqual(client.spec.options(), { ...DEFAULT_OPTIONS, debounceMs: 150 });
  const warnings = vscode.state.messages.filter((message) => message.level === 'warning');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]?.text ?? '', /assist\.maxTokens: "lots"/);

  // The same bad value is not reported again on the next change.
  vscode.changeSettings({ debounceMs: 200 });
  await settle();
  assert.equal(vscode.state.messages.filter((message) => message.level === 'warning').length, 1);
  assert.equal(client.notifications.length, 2);
});

test('changing the server path or languages restarts the client with the new values', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  harness = activateWith();
  await settle();
  vscode.changeSettings({ serverArgs: ['--verbose'], languages: ['python', 'lua'] });
  await settle();
  assert.equal(harness.clients.length, 2);
  assert.equal(harness.clients[0]?.stopped, 1);
  const second = harness.clients[1]!;
  assert.equal(second.started, 1);
  assert.deepEqual(second.spec.args, ['lsp', '--verbose']);
  assert.deepEqual(second.spec.languages, ['python', 'lua']);
  // Notifications from the old client no longer reach the status bar.
  harness.clients[0]!.notify('assist/status', { state: 'unavailable', daemonUrl: '', message: 'old' });
  assert.equal(vscode.state.statusBarItems[0]?.text, '$(sync~spin) assist starting');
});

test('Restart Language Server stops the client and starts a new one', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  harness = activateWith();
  await settle();
  await vscode.commands.executeCommand('assist.restartServer');
  assert.equal(harness.clients.length, 2);
  assert.equal(harness.clients[0]?.stopped, 1);
  assert.equal(harness.clients[1]?.started, 1);
});

test('deactivate stops the client', async () => {
  vscode.state.textDocuments.push(vscode.document('/w/app.py', 'python'));
  harness = activateWith();
  await settle();
  await deactivate();
  assert.equal(harness.clients[0]?.stopped, 1);
});
