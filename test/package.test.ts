import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from './harness/node-red';

describe('the package a palette install gets', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));

  it('declares what the Flow Library and Node-RED look for', () => {
    assert.equal(pkg.name, '@channel-sessions/node-red');
    assert.equal(pkg['node-red'].version, '>=4.0.0');
    assert.ok(pkg.engines.node);
    for (const k of ['node-red', 'slack', 'twilio', 'whatsapp', 'sms', 'ivr', 'chatbot']) assert.ok(pkg.keywords.includes(k), k);
    assert.ok(pkg.license && pkg.repository);
  });

  it('ships each node set with its html and message catalog beside it, and nothing else', () => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const out = execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const files: string[] = JSON.parse(out)[0].files.map((f: { path: string }) => f.path);
    for (const set of [...Object.values(pkg['node-red'].nodes), ...Object.values(pkg['node-red'].plugins)] as string[]) {
      assert.ok(files.includes(set), `${set} shipped`);
      const html = set.replace(/\.js$/, '.html');
      assert.ok(files.includes(html), `${html} shipped beside it`);
      assert.ok(existsSync(join(REPO_ROOT, html)), `${html} built`);
    }
    for (const set of Object.values(pkg['node-red'].nodes) as string[]) {
      const base = set.split('/').pop()!.replace(/\.js$/, '');
      assert.ok(files.includes(join(dirname(set), 'locales', 'en-US', `${base}.json`)), `${base} catalog`);
      assert.ok(files.includes(join(dirname(set), 'locales', 'en-US', `${base}.html`)), `${base} help`);
    }
    assert.ok(files.includes('resources/editor.js'), 'the shared editor helpers are shipped');
    const stray = files.filter((f) => !/^(dist\/|resources\/|examples\/|README\.md$|LICENSE$|package\.json$)/.test(f) || f.endsWith('.map') || f.endsWith('.ts'));
    assert.deepEqual(stray, []);
  });
});
