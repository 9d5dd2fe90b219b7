/**
 * Preloaded by `node --test --require` (see package.json): makes `require('vscode')` load the
 * stub, since the real module only exists inside VS Code's extension host.
 */
import Module = require('node:module');
import * as path from 'node:path';

const stubPath = path.join(__dirname, 'vscodeStub.js');
type Resolve = (request: string, ...rest: unknown[]) => string;
const internals = Module as unknown as { _resolveFilename: Resolve };
const resolve = internals._resolveFilename;
internals._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
  return request === 'vscode' ? stubPath : resolve.call(this, request, ...rest);
};
