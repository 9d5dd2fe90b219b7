/**
 * A scripted stand-in for `assist lsp`, speaking LSP over stdio: enough of the contract for
 * test/realClient.test.ts to drive the real vscode-languageclient. Every message it receives is
 * appended as a JSON line to the file named by ASSIST_SCRIPTED_LOG.
 */
import * as fs from 'node:fs';

interface Message {
  id?: number | string;
  method?: string;
  params?: unknown;
  result?: unknown;
}

const logPath = process.env.ASSIST_SCRIPTED_LOG;
// As strict as the real argparse-based CLI: an argument it does not know (`--stdio`) ends it.
if (process.argv.length !== 3 || process.argv[2] !== 'lsp' || logPath === undefined) {
  process.stderr.write(`usage: ASSIST_SCRIPTED_LOG=FILE scriptedServer lsp (got ${process.argv.slice(2).join(' ')})\n`);
  process.exit(2);
}

function send(message: Message): void {
  const body = JSON.stringify({ jsonrpc: '2.0', ...message });
  process.stdout.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

function handle(message: Message): void {
  fs.appendFileSync(logPath!, `${JSON.stringify(message)}\n`);
  switch (message.method) {
    case 'initialize':
      send({
        id: message.id,
        result: {
          capabilities: {
            textDocumentSync: 1,
            completionProvider: {},
            inlineCompletionProvider: {},
            executeCommandProvider: { commands: ['assist.fixFile', 'assist.feedback'] },
          },
        },
      });
      break;
    case 'initialized':
      send({
        method: 'assist/status',
        params: {
          state: 'ready',
          daemonUrl: 'http://127.0.0.1:8765',
          model: 'scripted',
          backend: 'CPU',
          lastLatencyMs: 42,
          message: null,
        },
      });
      send({ id: 'cfg-1', method: 'workspace/configuration', params: { items: [{ section: 'assist' }] } });
      break;
    case 'workspace/executeCommand': {
      const params = message.params as { arguments: [string] };
      const base = { requestId: 'fix-1', uri: params.arguments[0], kind: 'fix', text: '', ok: true, reason: null };
      for (const [stage, elapsedMs] of [['skeleton', 5], ['logic', 9], ['final', 12]] as const) {
        send({ method: 'assist/stage', params: { ...base, stage, elapsedMs } });
      }
      send({ id: message.id, result: { changed: true, verified: true, message: 'fixed 1 error' } });
      break;
    }
    case 'shutdown':
      send({ id: message.id, result: null });
      break;
    case 'exit':
      process.exit(0);
  }
}

let buffer = Buffer.alloc(0);
process.stdin.on('data', (chunk: Buffer) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const headerEnd = buffer.indexOf('\r\n\r\n');
    if (headerEnd < 0) {
      return;
    }
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, headerEnd).toString())?.[1]);
    if (buffer.length < headerEnd + 4 + length) {
      return;
    }
    const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString();
    buffer = buffer.subarray(headerEnd + 4 + length);
    handle(JSON.parse(body) as Message);
  }
});
