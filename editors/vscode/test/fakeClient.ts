/** A language client that records what the extension sends and lets a test play the server. */
import type { AssistClient, ClientSpec } from '../src/languageClient';
import { Disposable } from './vscodeStub';

export class FakeClient implements AssistClient {
  readonly requests: { method: string; params: unknown }[] = [];
  readonly notifications: { method: string; params: unknown }[] = [];
  private readonly handlers = new Map<string, ((params: unknown) => void)[]>();
  started = 0;
  stopped = 0;
  /** What start() does; a test sets it to make the start fail. */
  startResult: () => Promise<void> = () => Promise.resolve();
  /** The server's answer to a request. */
  answer: (method: string, params: unknown) => Promise<unknown> = () => Promise.resolve(null);

  constructor(readonly spec: ClientSpec) {}

  start(): Promise<void> {
    this.started += 1;
    return this.startResult();
  }

  stop(): Promise<void> {
    this.stopped += 1;
    return Promise.resolve();
  }

  sendRequest(method: string, params: unknown): Promise<unknown> {
    this.requests.push({ method, params });
    return this.answer(method, params);
  }

  sendNotification(method: string, params: unknown): Promise<void> {
    this.notifications.push({ method, params });
    return Promise.resolve();
  }

  onNotification(method: string, handler: (params: unknown) => void): Disposable {
    const list = this.handlers.get(method) ?? [];
    list.push(handler);
    this.handlers.set(method, list);
    return new Disposable(() => list.splice(list.indexOf(handler), 1));
  }

  /** The server sends a notification. */
  notify(method: string, params: unknown): void {
    for (const handler of this.handlers.get(method) ?? []) {
      handler(params);
    }
  }
}
