/**
 * Renders `assist/stage` notifications of fixes as a progress notification that names each
 * stage as it arrives and closes at `final`. Completion stages go to the status bar instead
 * (status.ts): a notification per keystroke would be noise.
 *
 * The texts and the progress increments are pure functions; FixProgressView only keeps one
 * progress notification per request id open.
 */
import * as vscode from 'vscode';
import { STAGE_ORDER, type StageParams } from './protocol';

/** How far through a request a stage is, in percent; an unknown stage does not move the bar. */
export function stagePercent(stage: string): number | undefined {
  const index = (STAGE_ORDER as readonly string[]).indexOf(stage);
  return index < 0 ? undefined : ((index + 1) * 100) / STAGE_ORDER.length;
}

const DIAGNOSIS_MAX = 100;

/**
 * The progress message for a fix stage, e.g. "logic · 340 ms". A repair's skeleton is its
 * diagnosis (what is broken and where), so its first line is worth showing; the later stages'
 * text is the whole fixed file, which is not.
 */
export function fixStageMessage(stage: StageParams): string {
  const head = `${stage.stage} · ${Math.round(stage.elapsedMs)} ms`;
  if (!stage.ok) {
    return `${head} — ${stage.reason ?? 'failed'}`;
  }
  const diagnosis = stage.stage === 'skeleton' ? (stage.text.trim().split('\n', 1)[0] ?? '') : '';
  if (diagnosis === '') {
    return head;
  }
  const short =
    diagnosis.length > DIAGNOSIS_MAX ? `${diagnosis.slice(0, DIAGNOSIS_MAX - 1)}…` : diagnosis;
  return `${head} — ${short}`;
}

/** The progress notification's title: the file's name, not its whole URI. */
export function fixTitle(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  const name = decodeURIComponentSafe(path.slice(path.lastIndexOf('/') + 1));
  return name ? `assist: fixing ${name}` : 'assist: fixing';
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

interface OpenProgress {
  report(message: string, increment: number | undefined): void;
  close(): void;
  percent: number;
}

/**
 * One progress notification per fix request. A request whose first stage is already `final`
 * (an answer from the cache) gets none: it would only flash, and the fix command shows the result.
 */
export class FixProgressView implements vscode.Disposable {
  private readonly open = new Map<string, OpenProgress>();

  /** @param staleMs closes a notification whose `final` never came (a lost server, say). */
  constructor(private readonly staleMs = 65_000) {}

  handle(stage: StageParams): void {
    if (stage.kind !== 'fix') {
      return;
    }
    let progress = this.open.get(stage.requestId);
    if (progress === undefined) {
      if (stage.stage === 'final') {
        return;
      }
      progress = this.start(stage);
    }
    const percent = stagePercent(stage.stage);
    const increment =
      percent !== undefined && percent > progress.percent ? percent - progress.percent : undefined;
    if (percent !== undefined && percent > progress.percent) {
      progress.percent = percent;
    }
    progress.report(fixStageMessage(stage), increment);
    if (stage.stage === 'final') {
      progress.close();
    }
  }

  /** How many fix notifications are open (for tests and for closing them on shutdown). */
  get openCount(): number {
    return this.open.size;
  }

  dispose(): void {
    for (const progress of [...this.open.values()]) {
      progress.close();
    }
  }

  private start(stage: StageParams): OpenProgress {
    const id = stage.requestId;
    let close!: () => void;
    const finished = new Promise<void>((resolve) => {
      close = resolve;
    });
    // withProgress may run the task later than now; reports made before then wait for it.
    const pending: [string, number | undefined][] = [];
    let report: ((message: string, increment: number | undefined) => void) | undefined;
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: fixTitle(stage.uri) },
      (progress) => {
        report = (message, increment) => progress.report({ message, increment });
        for (const [message, increment] of pending.splice(0)) {
          report(message, increment);
        }
        return finished;
      },
    );
    const timer = setTimeout(() => entry.close(), this.staleMs);
    // A stale-notification timer must never keep the extension host (or a test run) alive.
    timer.unref?.();
    const entry: OpenProgress = {
      percent: 0,
      report: (message, increment) => {
        if (report === undefined) {
          pending.push([message, increment]);
        } else {
          report(message, increment);
        }
      },
      close: () => {
        clearTimeout(timer);
        this.open.delete(id);
        close();
      },
    };
    this.open.set(id, entry);
    return entry;
  }
}
