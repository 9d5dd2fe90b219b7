import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { describeFixResult, fixActiveFile, type RequestSender } from '../src/fixCommand';
import * as vscode from './vscodeStub';

beforeEach(() => vscode.reset());

function sender(answer: (method: string, params: unknown) => Promise<unknown>) {
  const calls: { method: string; params: unknown }[] = [];
  const client: RequestSender = {
    sendRequest(method, params) {
      calls.push({ method, params });
      return answer(method, params);
    },
  };
  return { client, calls };
}

const languages = () => ['python', 'go'];

test('the fix command sends workspace/executeCommand with the active document URI', async () => {
  vscode.state.activeDocument = vscode.document('/w/broken.py', 'python');
  const { client, calls } = sender(() =>
    Promise.resolve({ changed: true, verified: true, message: 'fixed 1 error at line 3' }),
  );
  const shown = await fixActiveFile({ languages, client: () => Promise.resolve(client) });
  assert.deepEqual(calls, [
    {
      method: 'workspace/executeCommand',
      params: { command: 'assist.fixFile', arguments: ['file:///w/broken.py'] },
    },
  ]);
  assert.deepEqual(shown, { level: 'info', text: 'assist: fixed 1 error at line 3' });
  assert.deepEqual(vscode.state.messages, [
    { level: 'info', text: 'assist: fixed 1 error at line 3', items: [] },
  ]);
});

test('no active editor: a warning, and nothing is sent', async () => {
  const { client, calls } = sender(() => Promise.resolve(null));
  const shown = await fixActiveFile({ languages, client: () => Promise.resolve(client) });
  assert.equal(shown?.level, 'warning');
  assert.equal(calls.length, 0);
});

test('a language assist does not serve: a warning naming the setting', async () => {
  vscode.state.activeDocument = vscode.document('/w/notes.md', 'markdown');
  const { client, calls } = sender(() => Promise.resolve(null));
  const shown = await fixActiveFile({ languages, client: () => Promise.resolve(client) });
  assert.equal(shown?.level, 'warning');
  assert.match(shown?.text ?? '', /markdown.*assist\.languages/);
  assert.equal(calls.length, 0);
});

test('no server: nothing more is shown (the start failure was already reported)', async () => {
  vscode.state.activeDocument = vscode.document('/w/broken.py', 'python');
  const shown = await fixActiveFile({ languages, client: () => Promise.resolve(undefined) });
  assert.equal(shown, undefined);
  assert.deepEqual(vscode.state.messages, []);
});

test('a request that fails shows the error', async () => {
  vscode.state.activeDocument = vscode.document('/w/broken.py', 'python');
  const { client } = sender(() => Promise.reject(new Error('daemon busy')));
  const shown = await fixActiveFile({ languages, client: () => Promise.resolve(client) });
  assert.deepEqual(shown, { level: 'error', text: 'assist: the fix failed: daemon busy' });
});

test('fix results: verified is news, unverified is a warning, garbage is an error', () => {
  assert.deepEqual(describeFixResult({ changed: false, verified: true, message: '' }), {
    level: 'info',
    text: 'assist: nothing to fix.',
  });
  assert.deepEqual(describeFixResult({ changed: false, verified: false, message: '' }), {
    level: 'warning',
    text: 'assist: no verified fix was found; the file is unchanged.',
  });
  assert.deepEqual(
    describeFixResult({ changed: false, verified: false, message: 'no candidate parses' }),
    { level: 'warning', text: 'assist: no candidate parses' },
  );
  assert.equal(describeFixResult({ changed: true, message: 'x' }).level, 'warning');
  assert.equal(describeFixResult(null).level, 'error');
  assert.equal(describeFixResult({ verified: true }).level, 'error');
});
