/**
 * The status bar item: the daemon's state and last latency (from `assist/status`), or the latest
 * completion stage (from `assist/stage`), whichever came last. Clicking it opens the output.
 *
 * The texts come from pure functions so they are tested without VS Code; StatusBarView only
 * applies them to the item.
 */
import * as vscode from 'vscode';
import type { StageParams, StatusParams } from './protocol';

export const SHOW_OUTPUT_COMMAND = 'assist.showOutput';

/** What the item shows; `error` paints it with the error background. */
export interface StatusView {
  text: string;
  tooltip: string;
  error: boolean;
}

const CLICK_HINT = 'Click to show the assist output.';

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

function lines(...parts: (string | null | undefined | false)[]): string {
  return parts.filter((part): part is string => typeof part === 'string' && part !== '').join('\n');
}

/** The item for an `assist/status` notification. */
export function renderStatus(status: StatusParams): StatusView {
  const where = status.daemonUrl ? `daemon: ${status.daemonUrl}` : null;
  switch (status.state) {
    case 'starting':
      return {
        text: '$(sync~spin) assist starting',
        tooltip: lines('assist: starting the daemon', where, status.message, CLICK_HINT),
        error: false,
      };
    case 'ready': {
      const latency = status.lastLatencyMs;
      return {
        text: latency === null ? '$(check) assist' : `$(check) assist ${ms(latency)}`,
        tooltip: lines(
          'assist: ready',
          where,
          status.model && `model: ${status.model}`,
          status.backend && `backend: ${status.backend}`,
          latency !== null && `last latency: ${ms(latency)}`,
          status.message,
          CLICK_HINT,
        ),
        error: false,
      };
    }
    case 'unavailable':
      return {
        text: '$(error) assist unavailable',
        tooltip: lines(
          status.message ?? 'assist: the daemon is unavailable',
          where,
          CLICK_HINT,
        ),
        error: true,
      };
  }
}

/** The item for an `assist/stage` notification of a completion. */
export function renderCompletionStage(stage: StageParams): StatusView {
  const elapsed = ms(stage.elapsedMs);
  if (!stage.ok) {
    return {
      text: `$(warning) assist ${stage.stage} ${elapsed}`,
      tooltip: lines(
        `assist: the completion stopped at the ${stage.stage} stage after ${elapsed}`,
        `reason: ${stage.reason ?? 'none given'}`,
        CLICK_HINT,
      ),
      error: false,
    };
  }
  const done = stage.stage === 'final';
  return {
    // Spinning until `final`: the earlier stages are answers that are still being improved.
    text: `${done ? '$(check)' : '$(sync~spin)'} assist ${stage.stage} ${elapsed}`,
    tooltip: lines(`assist: completion ${stage.stage} stage after ${elapsed}`, CLICK_HINT),
    error: false,
  };
}

/** The item when the language server cannot run (not installed, or it keeps exiting). */
export function renderServerProblem(message: string): StatusView {
  return { text: '$(error) assist unavailable', tooltip: lines(message, CLICK_HINT), error: true };
}

/** The item while the language server process starts, before the first `assist/status`. */
export function renderServerStarting(): StatusView {
  return {
    text: '$(sync~spin) assist starting',
    tooltip: lines('assist: starting the language server', CLICK_HINT),
    error: false,
  };
}

export class StatusBarView implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'assist';
    this.item.command = SHOW_OUTPUT_COMMAND;
  }

  show(view: StatusView): void {
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.error
      ? new vscode.ThemeColor('statusBarItem.errorBackground')
      : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
