// Drives code-server (VS Code in a browser) in headless Chromium through playwright-core, as a
// programmer would: Quick Open, typing, Tab, the quick-fix menu, the command palette, the status
// bar and notifications. Every wait is bounded; a screenshot is taken at each step. What it
// sees is written as JSON to the results file (the pytest side asserts on it and on the files
// saved to disk); a step that fails records its error and a screenshot, and the script exits 1.
//
// Usage: node drive.mjs CONFIG.json (see tests/editors/test_vscode.py for its fields)
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { chromium } = await import(config.playwright);
const results = { steps: [] };
const save = () => writeFileSync(config.results, JSON.stringify(results, null, 1));
const stamp = () => new Date().toISOString();

const browser = await chromium.launch({
  executablePath: config.chromium,
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
let shot = 0;

async function screenshot(name) {
  shot += 1;
  const path = join(config.shots, `${String(shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path });
  return path;
}

async function step(name, body) {
  const began = Date.now();
  const record = { name, began: stamp() };
  results.steps.push(record);
  try {
    Object.assign(record, (await body()) ?? {});
    record.ok = true;
  } catch (error) {
    record.ok = false;
    record.error = String(error?.stack ?? error);
  }
  record.ms = Date.now() - began;
  record.screenshot = await screenshot(name).catch((e) => `no screenshot: ${e}`);
  save();
  if (!record.ok) {
    await browser.close();
    process.exit(1);
  }
}

/** Polls ``probe`` until it returns a truthy value; throws after ``ms``. */
async function until(what, probe, ms = 30000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`waited ${ms} ms for ${what}`);
    }
    await page.waitForTimeout(200);
  }
}

async function statusItems() {
  return page.$$eval('.statusbar-item', (items) =>
    items.map((item) => (item.textContent ?? '').trim()).filter((text) => text.includes('assist')),
  );
}

async function openFile(name) {
  const tab = await page.$(`.tab[aria-label*="${name}"]`);
  if (tab !== null) {
    await tab.click();
  } else {
    await quickOpen(name);
  }
  await until(`${name} in the active tab`, async () =>
    (await page.$(`.tab.active[aria-label*="${name}"]`)) !== null,
  );
  await page.click('.editor-instance .monaco-editor .view-lines');
}

async function quickOpen(name) {
  await page.keyboard.press('Control+P');
  const input = await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await input.fill(name);
  await page.waitForSelector(`.quick-input-list .monaco-list-row[aria-label*="${name}"]`);
  await page.keyboard.press('Enter');
}

async function editorText() {
  return page.$eval('.editor-instance .monaco-editor .view-lines', (el) =>
    el.innerText.replace(/\u00a0/g, ' '),
  );
}

async function saveFile() {
  await page.keyboard.press('Control+S');
  await until('the file saved', async () =>
    (await page.$('.tab.active.dirty')) === null,
  );
}

async function notifications(fragment) {
  return page.$$eval(
    '.notifications-toasts .notification-list-item-message, .notifications-center .notification-list-item-message',
    (items, text) => items.map((item) => item.textContent ?? '').filter((t) => t.includes(text)),
    fragment,
  );
}

await step('workbench', async () => {
  await page.goto(`${config.url}/?folder=${encodeURIComponent(config.workspace)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
  await page.waitForSelector('.statusbar', { timeout: 30000 });
});

await step('ghost text', async () => {
  await openFile(config.completion.file);
  await page.keyboard.press('Control+End');
  await page.keyboard.type(config.completion.typed, { delay: 5 });
  const status = await until('the status bar to show the server ready', async () => {
    const items = await statusItems();
    return items.find((text) => /assist/.test(text) && !/starting|unavailable/.test(text));
  }, 60000);
  const ghost = await until('ghost text', async () => {
    const found = await page.$$eval('.ghost-text-decoration, .ghost-text', (els) =>
      els.map((el) => el.textContent ?? '').join(''),
    );
    return found.trim() ? found : null;
  }, 60000);
  return { ghost, statusBefore: status };
});

await step('accepted with Tab', async () => {
  await page.keyboard.press('Tab');
  await until('the ghost text to go', async () =>
    (await page.$('.ghost-text-decoration')) === null,
  );
  const text = await editorText();
  await saveFile();
  const status = await until('the status bar to show the last latency', async () => {
    const items = await statusItems();
    return items.find((item) => /assist \d+ ms/.test(item));
  });
  return { editorText: text, status };
});

await step('next candidate', async () => {
  // A line the model finishes in several ways: Alt+] shows the next of its candidates.
  await openFile(config.cycle.file);
  await page.keyboard.press('Control+End');
  await page.keyboard.type(config.cycle.typed, { delay: 5 });
  const ghost = async () =>
    page.$$eval('.ghost-text-decoration, .ghost-text', (els) =>
      els.map((el) => el.textContent ?? '').join(''),
    );
  const first = await until('ghost text', async () => {
    const found = await ghost();
    return found.trim() ? found : null;
  }, 60000);
  await page.keyboard.press('Alt+BracketRight');
  const next = await until('the next candidate', async () => {
    const found = await ghost();
    return found.trim() && found !== first ? found : null;
  }, 30000);
  await page.keyboard.press('Escape');
  return { first, next };
});

await step('quick fix', async () => {
  await openFile(config.quickFix.file);
  await page.keyboard.press('Control+Home');
  const menu = await until('"Fix with assist" among the quick fixes', async () => {
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+.');
    await page.waitForTimeout(500);
    const items = await page.$$eval('.action-widget .monaco-list-row', (rows) =>
      rows.map((row) => row.textContent ?? ''),
    );
    return items.some((item) => item.includes('Fix with assist')) ? items : null;
  }, 60000);
  // The keyboard, as a programmer would: the menu takes the pointer's clicks behind a shield.
  await until('"Fix with assist" focused in the menu', async () => {
    const focused = await page.$eval('.action-widget .monaco-list-row.focused', (row) =>
      row.textContent ?? '',
    ).catch(() => '');
    if (focused.includes('Fix with assist')) {
      return true;
    }
    await page.keyboard.press('ArrowDown');
    return false;
  }, 10000);
  await page.keyboard.press('Enter');
  const text = await until('the fix applied', async () => {
    const now = await editorText();
    return now.includes(config.quickFix.expect) ? now : null;
  }, 90000);
  await saveFile();
  return { menu, editorText: text };
});

await step('fix file command', async () => {
  await openFile(config.fixCommand.file);
  await page.keyboard.press('Control+Shift+P');
  const input = await page.waitForSelector('.quick-input-widget .quick-input-box input');
  await input.fill('>Assist: Fix File');
  await page.waitForSelector('.quick-input-list .monaco-list-row[aria-label*="Assist: Fix File"]');
  await page.keyboard.press('Enter');
  const text = await until('the file fixed', async () => {
    const now = await editorText();
    return now.includes(config.fixCommand.expect) ? now : null;
  }, 90000);
  const messages = await until('the message that says what was fixed', async () => {
    const found = await notifications(config.fixCommand.file);
    return found.some((text) => text.includes('fixed')) ? found : null;
  });
  await saveFile();
  return { editorText: text, messages };
});

await step('daemon stopped', async () => {
  process.kill(config.daemon.pid, 'SIGTERM');
  await openFile(config.completion.file);
  await page.keyboard.press('Control+End');
  // A request finds the daemon gone: the language server says so once and reconnects.
  const messages = await until('the message that the daemon stopped', async () => {
    await page.keyboard.type('\nvalue = circle_', { delay: 20 });
    await page.waitForTimeout(1500);
    const found = await notifications('stopped answering');
    return found.length ? found : null;
  }, 60000);
  const status = await until('the status bar to say so', async () =>
    (await statusItems()).find((text) => /unavailable|starting/.test(text)),
  );
  return { messages, status };
});

await step('daemon back', async () => {
  const child = spawn(config.daemon.restart[0], config.daemon.restart.slice(1), {
    env: config.daemon.env,
    cwd: config.daemon.cwd,
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  results.restartedPid = child.pid;
  save();
  const status = await until('the status bar ready again', async () =>
    (await statusItems()).find((text) => /assist/.test(text) && !/unavailable|starting/.test(text)),
  150000);
  const messages = await notifications('stopped answering');
  return { status, messages };
});

await browser.close();
