import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  configurationValue,
  DEFAULT_LANGUAGES,
  DEFAULT_OPTIONS,
  readSettings,
  toInitializationOptions,
  type SettingsSource,
} from '../src/config';

function source(values: Record<string, unknown>): SettingsSource {
  return { get: (key) => values[key] };
}

test('unset settings give the defaults and no warning', () => {
  const { options, warnings } = toInitializationOptions(source({}));
  assert.deepEqual(options, {
    daemonUrl: null,
    ca: null,
    autostart: true,
    debounceMs: 75,
    maxTokens: null,
    inlineCompletion: true,
    completionItems: true,
    stageNotifications: true,
    fixCandidates: null,
    logLevel: 'info',
  });
  assert.deepEqual(warnings, []);
});

test('null is the same as unset, as VS Code reports a null default', () => {
  const values = Object.fromEntries(Object.keys(DEFAULT_OPTIONS).map((key) => [key, null]));
  const { options, warnings } = toInitializationOptions(source(values));
  assert.deepEqual(options, DEFAULT_OPTIONS);
  assert.deepEqual(warnings, []);
});

test('valid values pass through unchanged', () => {
  const { options, warnings } = toInitializationOptions(
    source({
      daemonUrl: ' https://gpu-box:9000 ',
      ca: ' /etc/assist/ca.pem ',
      autostart: false,
      debounceMs: 0,
      maxTokens: 1024,
      inlineCompletion: false,
      completionItems: false,
      stageNotifications: false,
      fixCandidates: 16,
      logLevel: 'debug',
    }),
  );
  assert.deepEqual(options, {
    daemonUrl: 'https://gpu-box:9000',
    ca: '/etc/assist/ca.pem',
    autostart: false,
    debounceMs: 0,
    maxTokens: 1024,
    inlineCompletion: false,
    completionItems: false,
    stageNotifications: false,
    fixCandidates: 16,
    logLevel: 'debug',
  });
  assert.deepEqual(warnings, []);
});

test('an empty daemon URL means the local default', () => {
  const { options, warnings } = toInitializationOptions(source({ daemonUrl: '  ' }));
  assert.equal(options.daemonUrl, null);
  assert.deepEqual(warnings, []);
});

test('an empty CA path means the system CAs', () => {
  const { options, warnings } = toInitializationOptions(source({ ca: ' ' }));
  assert.equal(options.ca, null);
  assert.deepEqual(warnings, []);
});

test('each invalid value falls back to its default with one warning naming it', () => {
  const { options, warnings } = toInitializationOptions(
    source({
      daemonUrl: 'ftp://example.invalid',
      ca: 42,
      autostart: 'yes',
      debounceMs: -5,
      maxTokens: 1.5,
      inlineCompletion: 1,
      completionItems: 'false',
      stageNotifications: [],
      fixCandidates: 99,
      logLevel: 'verbose',
    }),
  );
  assert.deepEqual(options, DEFAULT_OPTIONS);
  assert.equal(warnings.length, 10);
  for (const key of Object.keys(DEFAULT_OPTIONS)) {
    assert.ok(
      warnings.some((warning) => warning.startsWith(`assist.${key}: `)),
      `no warning for ${key}`,
    );
  }
  assert.ok(warnings.includes('assist.debounceMs: -5 is not an integer from 0 to 5000; using 75'));
  assert.ok(warnings.includes('assist.ca: 42 is not null or a file path; using null'));
  assert.ok(
    warnings.includes('assist.logLevel: "verbose" is not one of error, warning, info, debug; using "info"'),
  );
});

test('a bad value leaves the other settings as given', () => {
  const { options, warnings } = toInitializationOptions(
    source({ debounceMs: 'fast', maxTokens: 64, logLevel: 'error' }),
  );
  assert.equal(options.debounceMs, 75);
  assert.equal(options.maxTokens, 64);
  assert.equal(options.logLevel, 'error');
  assert.equal(warnings.length, 1);
});

test('numbers outside the server ranges are rejected', () => {
  const cases: [string, unknown][] = [
    ['debounceMs', 5001],
    ['maxTokens', 0],
    ['maxTokens', 1025],
    ['fixCandidates', 0],
    ['fixCandidates', 17],
    ['debounceMs', Number.NaN],
  ];
  for (const [key, value] of cases) {
    const { warnings } = toInitializationOptions(source({ [key]: value }));
    assert.equal(warnings.length, 1, `${key}=${String(value)}`);
  }
});

test('a getter that throws counts as unset', () => {
  const { options, warnings } = toInitializationOptions({
    get: () => {
      throw new Error('broken settings.json');
    },
  });
  assert.deepEqual(options, DEFAULT_OPTIONS);
  assert.deepEqual(warnings, []);
});

test('server path, arguments and languages: defaults', () => {
  const { settings, warnings } = readSettings(source({}));
  assert.equal(settings.serverPath, 'assist');
  assert.deepEqual(settings.serverArgs, []);
  assert.deepEqual(settings.languages, DEFAULT_LANGUAGES);
  assert.deepEqual(settings.initializationOptions, DEFAULT_OPTIONS);
  assert.deepEqual(warnings, []);
});

test('server path, arguments and languages: valid values, duplicates dropped', () => {
  const { settings, warnings } = readSettings(
    source({
      serverPath: ' /opt/assist/bin/assist ',
      serverArgs: ['--log-file', '/tmp/assist.log'],
      languages: ['python', 'lua', 'python'],
    }),
  );
  assert.equal(settings.serverPath, '/opt/assist/bin/assist');
  assert.deepEqual(settings.serverArgs, ['--log-file', '/tmp/assist.log']);
  assert.deepEqual(settings.languages, ['python', 'lua']);
  assert.deepEqual(warnings, []);
});

test('server path, arguments and languages: invalid values fall back with warnings', () => {
  const { settings, warnings } = readSettings(
    source({ serverPath: '', serverArgs: '--verbose', languages: [] }),
  );
  assert.equal(settings.serverPath, 'assist');
  assert.deepEqual(settings.serverArgs, []);
  assert.deepEqual(settings.languages, DEFAULT_LANGUAGES);
  assert.equal(warnings.length, 3);
  const mixed = readSettings(source({ languages: ['python', 3] }));
  assert.deepEqual(mixed.settings.languages, DEFAULT_LANGUAGES);
  assert.equal(mixed.warnings.length, 1);
});

test('workspace/configuration answers: the section, one key, and not ours', () => {
  const options = { ...DEFAULT_OPTIONS, maxTokens: 32 };
  assert.deepEqual(configurationValue('assist', options), options);
  assert.equal(configurationValue('assist.maxTokens', options), 32);
  assert.equal(configurationValue('assist.fixCandidates', options), null);
  assert.equal(configurationValue('assist.serverPath', options), undefined);
  assert.equal(configurationValue('editor', options), undefined);
  assert.equal(configurationValue(undefined, options), undefined);
});
