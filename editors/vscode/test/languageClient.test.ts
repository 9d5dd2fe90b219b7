import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CloseAction, ErrorAction } from 'vscode-languageclient/node';
import { DEFAULT_OPTIONS } from '../src/config';
import { clientOptions, documentSelector, serverOptions, type ClientSpec } from '../src/languageClient';
import { LogOutputChannel } from './vscodeStub';

function spec(overrides: Partial<ClientSpec> = {}): ClientSpec & { gone: string[] } {
  const gone: string[] = [];
  return {
    command: '/usr/bin/assist',
    args: ['lsp'],
    cwd: '/w',
    languages: ['python', 'go'],
    options: () => ({ ...DEFAULT_OPTIONS, maxTokens: 48 }),
    outputChannel: new LogOutputChannel('assist') as unknown as import('vscode').LogOutputChannel,
    onServerGone: (detail) => gone.push(detail),
    ...overrides,
    gone,
  };
}

test('the server runs as `<command> lsp` over stdio in the workspace folder, with no --stdio', () => {
  assert.deepEqual(serverOptions(spec()), {
    command: '/usr/bin/assist',
    args: ['lsp'],
    options: { cwd: '/w' },
  });
  assert.deepEqual(serverOptions(spec({ cwd: undefined, args: ['lsp', '-v'] })), {
    command: '/usr/bin/assist',
    args: ['lsp', '-v'],
    options: {},
  });
});

test('documents of each language, saved or not, go to the server', () => {
  assert.deepEqual(documentSelector(['python', 'go']), [
    { scheme: 'file', language: 'python' },
    { scheme: 'untitled', language: 'python' },
    { scheme: 'file', language: 'go' },
    { scheme: 'untitled', language: 'go' },
  ]);
});

test('initializationOptions are read when the server starts (so a restart sends the latest)', () => {
  let maxTokens = 48;
  const options = clientOptions(spec({ options: () => ({ ...DEFAULT_OPTIONS, maxTokens }) }), () => true);
  assert.equal(typeof options.initializationOptions, 'function');
  maxTokens = 64;
  const read = (options.initializationOptions as () => unknown)();
  assert.deepEqual(read, { ...DEFAULT_OPTIONS, maxTokens: 64 });
  assert.equal(options.synchronize, undefined);
});

test('workspace/configuration: the assist section is answered with the checked options', async () => {
  const options = clientOptions(spec(), () => true);
  const configuration = options.middleware?.workspace?.configuration;
  assert.ok(configuration);
  const params = {
    items: [{ section: 'assist' }, { section: 'assist.maxTokens' }, { section: 'editor.tabSize' }],
  };
  const next = () => [{ raw: true }, 'raw', 4];
  const answers = await configuration(params, {} as never, next as never);
  assert.deepEqual(answers, [{ ...DEFAULT_OPTIONS, maxTokens: 48 }, 48, 4]);
});

test('a server that keeps exiting is restarted a few times, then reported once', async () => {
  const s = spec();
  const handler = clientOptions(s, () => true).errorHandler;
  assert.ok(handler);
  const actions: unknown[] = [];
  for (let i = 0; i < 4; i += 1) {
    actions.push(await handler.closed());
  }
  assert.deepEqual(actions, [
    { action: CloseAction.Restart, handled: true },
    { action: CloseAction.Restart, handled: true },
    { action: CloseAction.Restart, handled: true },
    { action: CloseAction.DoNotRestart, handled: true },
  ]);
  assert.equal(s.gone.length, 1);
  assert.deepEqual(await handler.error(new Error('x'), undefined, 1), { action: ErrorAction.Continue });
  assert.deepEqual(await handler.error(new Error('x'), undefined, 4), { action: ErrorAction.Shutdown });
});

test('a server that exits while starting is not restarted but reported once', async () => {
  const s = spec();
  const handler = clientOptions(s, () => false).errorHandler;
  assert.ok(handler);
  assert.deepEqual(await handler.closed(), { action: CloseAction.DoNotRestart, handled: true });
  assert.deepEqual(s.gone, ['it exited during startup']);
});

test('a failed initialize is reported by the extension, not retried', () => {
  const s = spec();
  const handler = clientOptions(s, () => true).initializationFailedHandler;
  assert.ok(handler);
  assert.equal(handler(new Error('unknown command "lsp"')), false);
  assert.deepEqual(s.gone, ['unknown command "lsp"']);
});
