import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  expandServerPath,
  findExecutable,
  isExecutableFile,
  RestartBudget,
  serverFailedMessage,
  serverMissingMessage,
} from '../src/server';

test('the missing-server message names the command and how to install it', () => {
  const message = serverMissingMessage('assist');
  assert.match(message, /"assist" was not found/);
  assert.match(message, /pip install assist/);
  assert.match(message, /make run/);
  assert.match(message, /assist\.serverPath/);
  assert.match(serverFailedMessage('assist', 'exit code 2'), /"assist lsp" is not running \(exit code 2\)/);
});

test('server paths: ~, ${workspaceFolder} and paths relative to the workspace', () => {
  const context = { home: '/home/u', workspaceFolder: '/w/proj' };
  assert.equal(expandServerPath('assist', context), 'assist');
  assert.equal(expandServerPath('~/.local/bin/assist', context), '/home/u/.local/bin/assist');
  assert.equal(expandServerPath('${workspaceFolder}/.venv/bin/assist', context), '/w/proj/.venv/bin/assist');
  assert.equal(expandServerPath('.venv/bin/assist', context), '/w/proj/.venv/bin/assist');
  assert.equal(expandServerPath('/opt/assist', context), '/opt/assist');
  assert.equal(
    expandServerPath('.venv/bin/assist', { home: '/home/u', workspaceFolder: undefined }),
    '.venv/bin/assist',
  );
});

test('findExecutable searches PATH in order and skips what is not executable', () => {
  const present = new Set(['/b/assist', '/c/assist']);
  const found = findExecutable('assist', { PATH: '/a::/b:/c' }, 'linux', (p) => present.has(p));
  assert.equal(found, '/b/assist');
  assert.equal(findExecutable('assist', { PATH: '/a' }, 'linux', (p) => present.has(p)), undefined);
  assert.equal(findExecutable('assist', {}, 'linux', () => true), undefined);
  assert.equal(findExecutable('/c/assist', { PATH: '' }, 'linux', (p) => present.has(p)), '/c/assist');
});

test('findExecutable on Windows tries the PATHEXT extensions', () => {
  const present = new Set(['C:\\py\\Scripts\\assist.EXE']);
  const found = findExecutable(
    'assist',
    { PATH: 'C:\\Windows;C:\\py\\Scripts', PATHEXT: '.COM;.EXE' },
    'win32',
    (p) => present.has(p),
  );
  assert.equal(found, 'C:\\py\\Scripts\\assist.EXE');
});

test('isExecutableFile: an executable file yes; a plain file or a directory no', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assist-vscode-'));
  try {
    const script = path.join(dir, 'assist');
    fs.writeFileSync(script, '#!/bin/sh\n', { mode: 0o755 });
    const plain = path.join(dir, 'notes.txt');
    fs.writeFileSync(plain, 'x', { mode: 0o644 });
    assert.equal(isExecutableFile(script), true);
    assert.equal(isExecutableFile(dir), false);
    assert.equal(isExecutableFile(path.join(dir, 'missing')), false);
    if (process.platform !== 'win32') {
      assert.equal(isExecutableFile(plain), false);
    }
    assert.equal(findExecutable('assist', { PATH: dir }), script);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the restart budget allows a few restarts, then stops, and forgets old exits', () => {
  const budget = new RestartBudget(2, 1000);
  assert.equal(budget.allowRestart(0), true);
  assert.equal(budget.allowRestart(10), true);
  assert.equal(budget.allowRestart(20), false);
  // Long after: the old exits no longer count.
  assert.equal(budget.allowRestart(5000), true);
});
