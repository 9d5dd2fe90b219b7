import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseStage, parseStatus, type StageParams, type StatusParams } from '../src/protocol';
import {
  renderCompletionStage,
  renderServerProblem,
  renderServerStarting,
  renderStatus,
} from '../src/status';

function status(overrides: Partial<StatusParams>): StatusParams {
  return {
    state: 'ready',
    daemonUrl: 'http://127.0.0.1:8765',
    model: 'Gemma 3 270m',
    backend: 'CPU',
    lastLatencyMs: null,
    message: null,
    ...overrides,
  };
}

function stage(overrides: Partial<StageParams>): StageParams {
  return {
    requestId: 'r1',
    uri: 'file:///w/app.py',
    kind: 'complete',
    stage: 'logic',
    text: 'return x',
    elapsedMs: 120,
    ok: true,
    reason: null,
    ...overrides,
  };
}

test('ready with a latency shows a check and the rounded milliseconds', () => {
  const view = renderStatus(status({ lastLatencyMs: 41.6 }));
  assert.equal(view.text, '$(check) assist 42 ms');
  assert.equal(view.error, false);
  assert.match(view.tooltip, /model: Gemma 3 270m/);
  assert.match(view.tooltip, /backend: CPU/);
  assert.match(view.tooltip, /daemon: http:\/\/127\.0\.0\.1:8765/);
  assert.match(view.tooltip, /last latency: 42 ms/);
});

test('ready before any request shows no latency', () => {
  const view = renderStatus(status({ model: null, backend: null }));
  assert.equal(view.text, '$(check) assist');
  assert.doesNotMatch(view.tooltip, /model:|backend:|latency/);
});

test('starting spins', () => {
  const view = renderStatus(status({ state: 'starting' }));
  assert.equal(view.text, '$(sync~spin) assist starting');
  assert.equal(view.error, false);
});

test('unavailable shows an error with the message in the tooltip', () => {
  const view = renderStatus(
    status({ state: 'unavailable', message: 'connection refused by 127.0.0.1:8765' }),
  );
  assert.equal(view.text, '$(error) assist unavailable');
  assert.equal(view.error, true);
  assert.match(view.tooltip, /^connection refused by 127\.0\.0\.1:8765\n/);
});

test('unavailable without a message still says what is wrong', () => {
  const view = renderStatus(status({ state: 'unavailable' }));
  assert.match(view.tooltip, /daemon is unavailable/);
});

test('a completion stage shows its name and elapsed time, spinning until final', () => {
  assert.equal(renderCompletionStage(stage({ stage: 'skeleton', elapsedMs: 35 })).text, '$(sync~spin) assist skeleton 35 ms');
  const final = renderCompletionStage(stage({ stage: 'final', elapsedMs: 812.4 }));
  assert.equal(final.text, '$(check) assist final 812 ms');
  assert.doesNotMatch(final.tooltip, /reason/);
});

test('a failed completion stage warns and puts the reason in the tooltip', () => {
  const view = renderCompletionStage(
    stage({ stage: 'errors', ok: false, reason: 'deadline exceeded', elapsedMs: 3000 }),
  );
  assert.equal(view.text, '$(warning) assist errors 3000 ms');
  assert.match(view.tooltip, /reason: deadline exceeded/);
  assert.match(renderCompletionStage(stage({ ok: false })).tooltip, /reason: none given/);
});

test('server problem and server starting views', () => {
  const problem = renderServerProblem('assist: not found');
  assert.equal(problem.text, '$(error) assist unavailable');
  assert.equal(problem.error, true);
  assert.match(problem.tooltip, /^assist: not found/);
  assert.equal(renderServerStarting().text, '$(sync~spin) assist starting');
});

test('parseStatus accepts the contract and rejects what it cannot render', () => {
  assert.deepEqual(parseStatus({ state: 'ready', daemonUrl: 'u', lastLatencyMs: 5 }), {
    state: 'ready',
    daemonUrl: 'u',
    model: null,
    backend: null,
    lastLatencyMs: 5,
    message: null,
  });
  assert.equal(parseStatus({ state: 'sleeping' }), undefined);
  assert.equal(parseStatus(null), undefined);
  assert.equal(parseStatus([]), undefined);
  assert.equal(parseStatus({ state: 'ready', lastLatencyMs: 'fast' })?.lastLatencyMs, null);
});

test('parseStage accepts the contract, tolerates missing optional fields, rejects the rest', () => {
  const full = stage({});
  assert.deepEqual(parseStage({ ...full, extra: 1 }), full);
  assert.deepEqual(parseStage({ requestId: 'r', kind: 'fix', stage: 'final' }), {
    requestId: 'r',
    uri: '',
    kind: 'fix',
    stage: 'final',
    text: '',
    elapsedMs: 0,
    ok: true,
    reason: null,
  });
  assert.equal(parseStage({ requestId: 'r', kind: 'chat', stage: 'final' }), undefined);
  assert.equal(parseStage({ kind: 'fix', stage: 'final' }), undefined);
  assert.equal(parseStage({ requestId: 'r', kind: 'fix', stage: '' }), undefined);
  assert.equal(parseStage('final'), undefined);
});
