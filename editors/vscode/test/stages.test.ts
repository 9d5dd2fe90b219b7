import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import type { StageParams } from '../src/protocol';
import { FixProgressView, fixStageMessage, fixTitle, stagePercent } from '../src/stages';
import * as vscode from './vscodeStub';

function fixStage(stage: string, overrides: Partial<StageParams> = {}): StageParams {
  return {
    requestId: 'fix-1',
    uri: 'file:///w/src/broken%20file.py',
    kind: 'fix',
    stage,
    text: '',
    elapsedMs: 100,
    ok: true,
    reason: null,
    ...overrides,
  };
}

/** Lets the promise callbacks of withProgress run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

beforeEach(() => vscode.reset());

test('stage messages name the stage and its elapsed time', () => {
  assert.equal(fixStageMessage(fixStage('skeleton', { elapsedMs: 12.7 })), 'skeleton · 13 ms');
  assert.equal(fixStageMessage(fixStage('logic', { elapsedMs: 340 })), 'logic · 340 ms');
  assert.equal(
    fixStageMessage(fixStage('final', { ok: false, reason: 'no candidate parses' })),
    'final · 100 ms — no candidate parses',
  );
  assert.equal(fixStageMessage(fixStage('final', { ok: false })), 'final · 100 ms — failed');
});

test("a fix's skeleton shows its diagnosis; later stages do not show the file", () => {
  const diagnosis = "line 1, column 8: '(' was never closed\nwill change line 1";
  assert.equal(
    fixStageMessage(fixStage('skeleton', { text: diagnosis, elapsedMs: 4 })),
    "skeleton · 4 ms — line 1, column 8: '(' was never closed",
  );
  assert.equal(fixStageMessage(fixStage('final', { text: 'def add(a, b):\n' })), 'final · 100 ms');
  const long = fixStageMessage(fixStage('skeleton', { text: 'x'.repeat(300) }));
  assert.ok(long.endsWith('…') && long.length < 140, long);
});

test('stages move the progress bar in order; an unknown stage does not', () => {
  assert.deepEqual(
    ['skeleton', 'logic', 'errors', 'final'].map(stagePercent),
    [25, 50, 75, 100],
  );
  assert.equal(stagePercent('polish'), undefined);
});

test('the title names the file, decoded', () => {
  assert.equal(fixTitle('file:///w/src/broken%20file.py'), 'assist: fixing broken file.py');
  assert.equal(fixTitle('untitled:Untitled-1'), 'assist: fixing untitled:Untitled-1');
  assert.equal(fixTitle('file:///w/a.py?x=1#top'), 'assist: fixing a.py');
  assert.equal(fixTitle(''), 'assist: fixing');
});

test('a fix shows one notification that lists the stages and closes at final', async () => {
  const view = new FixProgressView();
  view.handle(fixStage('skeleton', { elapsedMs: 20 }));
  view.handle(fixStage('logic', { elapsedMs: 300 }));
  assert.equal(vscode.state.progress.length, 1);
  const [record] = vscode.state.progress;
  assert.equal(record?.title, 'assist: fixing broken file.py');
  assert.equal(record?.location, vscode.ProgressLocation.Notification);
  assert.equal(view.openCount, 1);
  view.handle(fixStage('final', { elapsedMs: 500 }));
  await settle();
  assert.deepEqual(record?.reports, [
    { message: 'skeleton · 20 ms', increment: 25 },
    { message: 'logic · 300 ms', increment: 25 },
    { message: 'final · 500 ms', increment: 50 },
  ]);
  assert.equal(record?.done, true);
  assert.equal(view.openCount, 0);
});

test('two fixes at once get a notification each', async () => {
  const view = new FixProgressView();
  view.handle(fixStage('skeleton', { requestId: 'a' }));
  view.handle(fixStage('skeleton', { requestId: 'b' }));
  view.handle(fixStage('final', { requestId: 'a' }));
  await settle();
  assert.equal(vscode.state.progress.length, 2);
  assert.deepEqual(
    vscode.state.progress.map((record) => record.done),
    [true, false],
  );
  view.dispose();
  await settle();
  assert.equal(vscode.state.progress[1]?.done, true);
});

test('completion stages and a lone final (a cached fix) open no notification', () => {
  const view = new FixProgressView();
  view.handle(fixStage('skeleton', { kind: 'complete' }));
  view.handle(fixStage('final'));
  assert.equal(vscode.state.progress.length, 0);
  assert.equal(view.openCount, 0);
});

test('a fix whose final never comes is closed after the stale timeout', async () => {
  const view = new FixProgressView(5);
  view.handle(fixStage('skeleton'));
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(view.openCount, 0);
  assert.equal(vscode.state.progress[0]?.done, true);
});
