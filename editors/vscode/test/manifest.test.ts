/** package.json's contributions agree with the code: settings, defaults and command ids. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { DEFAULT_LANGUAGES, DEFAULT_OPTIONS, DEFAULT_SERVER_PATH } from '../src/config';
import { RESTART_COMMAND } from '../src/extension';
import { FIX_ACTIVE_FILE_COMMAND } from '../src/fixCommand';
import { FEEDBACK_COMMAND, FIX_FILE_COMMAND } from '../src/protocol';
import { SHOW_OUTPUT_COMMAND } from '../src/status';

interface Manifest {
  main: string;
  activationEvents: string[];
  contributes: {
    commands: { command: string; title: string }[];
    configuration: { properties: Record<string, { default: unknown; description?: string; markdownDescription?: string }> };
  };
}

// Compiled tests run from out/test, so the package root is two levels up.
const manifest = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'),
) as Manifest;
const properties = manifest.contributes.configuration.properties;

test('every setting is contributed with the default the code uses and a description', () => {
  const expected: Record<string, unknown> = {
    ...DEFAULT_OPTIONS,
    serverPath: DEFAULT_SERVER_PATH,
    serverArgs: [],
    languages: DEFAULT_LANGUAGES,
  };
  for (const [key, value] of Object.entries(expected)) {
    const property = properties[`assist.${key}`];
    assert.ok(property, `assist.${key} is not contributed`);
    assert.deepEqual(property.default, value, `assist.${key} default`);
    assert.ok(property.description ?? property.markdownDescription, `assist.${key} description`);
  }
});

test('the palette commands are contributed; the server command ids are not ours to register', () => {
  const ids = manifest.contributes.commands.map((command) => command.command);
  assert.deepEqual(ids.sort(), [FIX_ACTIVE_FILE_COMMAND, RESTART_COMMAND, SHOW_OUTPUT_COMMAND].sort());
  assert.ok(!ids.includes(FIX_FILE_COMMAND));
  assert.ok(!ids.includes(FEEDBACK_COMMAND));
  const fix = manifest.contributes.commands.find((command) => command.command === FIX_ACTIVE_FILE_COMMAND);
  assert.equal(fix?.title, 'Fix File');
});

test('the extension activates on each default language and loads the bundle', () => {
  assert.deepEqual(
    manifest.activationEvents,
    DEFAULT_LANGUAGES.map((language) => `onLanguage:${language}`),
  );
  assert.equal(manifest.main, './dist/extension.js');
});
