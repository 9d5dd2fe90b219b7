/**
 * The wire contract with `assist lsp` beyond standard LSP: command ids, custom notifications and
 * the fix command's result, with guards that turn the server's JSON into typed values.
 *
 * The guards are lenient about optional fields and strict about the ones the UI needs, so a
 * newer server that adds fields (or an older one that omits some) never breaks the rendering.
 */

/** The server's command (listed in its `executeCommandProvider`): `arguments: [uri]`. */
export const FIX_FILE_COMMAND = 'assist.fixFile';
/** The server's command that inline completion items carry, run by VS Code on accept. */
export const FEEDBACK_COMMAND = 'assist.feedback';
export const STAGE_NOTIFICATION = 'assist/stage';
export const STATUS_NOTIFICATION = 'assist/status';

export type StageKind = 'complete' | 'fix';
/** The stages in the order the daemon streams them; each replaces the previous one. */
export const STAGE_ORDER = ['skeleton', 'logic', 'errors', 'final'] as const;

export interface StageParams {
  requestId: string;
  uri: string;
  kind: StageKind;
  /** One of STAGE_ORDER; kept as a string so a stage added later still renders. */
  stage: string;
  text: string;
  elapsedMs: number;
  ok: boolean;
  reason: string | null;
}

export type DaemonState = 'starting' | 'ready' | 'unavailable';

export interface StatusParams {
  state: DaemonState;
  daemonUrl: string;
  model: string | null;
  backend: string | null;
  lastLatencyMs: number | null;
  message: string | null;
}

export interface FixResult {
  changed: boolean;
  verified: boolean;
  message: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function optionalNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function parseStage(raw: unknown): StageParams | undefined {
  if (!isRecord(raw)) {
    return undefined;
  }
  const { requestId, uri, kind, stage } = raw;
  if (typeof requestId !== 'string' || (kind !== 'complete' && kind !== 'fix')) {
    return undefined;
  }
  if (typeof stage !== 'string' || stage === '') {
    return undefined;
  }
  return {
    requestId,
    uri: typeof uri === 'string' ? uri : '',
    kind,
    stage,
    text: typeof raw.text === 'string' ? raw.text : '',
    elapsedMs: optionalNumber(raw.elapsedMs) ?? 0,
    // A missing `ok` is read as success: only an explicit false means the stage failed.
    ok: raw.ok !== false,
    reason: optionalString(raw.reason),
  };
}

export function parseStatus(raw: unknown): StatusParams | undefined {
  if (!isRecord(raw)) {
    return undefined;
  }
  const { state } = raw;
  if (state !== 'starting' && state !== 'ready' && state !== 'unavailable') {
    return undefined;
  }
  return {
    state,
    daemonUrl: typeof raw.daemonUrl === 'string' ? raw.daemonUrl : '',
    model: optionalString(raw.model),
    backend: optionalString(raw.backend),
    lastLatencyMs: optionalNumber(raw.lastLatencyMs),
    message: optionalString(raw.message),
  };
}

export function parseFixResult(raw: unknown): FixResult | undefined {
  if (!isRecord(raw) || typeof raw.changed !== 'boolean') {
    return undefined;
  }
  return {
    changed: raw.changed,
    // Unverified unless the server says so: a fix is never presented as checked by accident.
    verified: raw.verified === true,
    message: typeof raw.message === 'string' ? raw.message : '',
  };
}
