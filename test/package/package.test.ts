import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import should from 'should';
import { REPO_ROOT } from '../harness/node-red';

describe('the package a palette install gets', function () {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));

  it('declares what the Flow Library and Node-RED look for', function () {
    pkg.name.should.equal('@channel-sessions/node-red');
    pkg['node-red'].version.should.equal('>=4.1.0');
    should(pkg.engines.node).be.ok();
    for (const k of ['node-red', 'slack', 'twilio', 'whatsapp', 'sms', 'ivr', 'chatbot']) pkg.keywords.should.containEql(k);
    should(pkg.license && pkg.repository).be.ok();
  });

  it('ships each node set with its html and message catalog beside it, and nothing else', function () {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const out = execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files: string[] = JSON.parse(out)[0].files.map((f: { path: string }) => f.path);
    for (const set of [...Object.values(pkg['node-red'].nodes), ...Object.values(pkg['node-red'].plugins)] as string[]) {
      files.should.containEql(set);
      const html = set.replace(/\.js$/, '.html');
      files.should.containEql(html);
      existsSync(join(REPO_ROOT, html)).should.be.true(`${html} built`);
    }
    for (const set of Object.values<string>(pkg['node-red'].nodes)) {
      const base = set.split('/').pop()!.replace(/\.js$/, '');
      files.should.containEql(join(dirname(set), 'locales', 'en-US', `${base}.json`));
      files.should.containEql(join(dirname(set), 'locales', 'en-US', `${base}.html`));
    }
    files.should.containEql('resources/editor.js');
    files.should.containEql('redis-context.js'); // require('@channel-sessions/node-red/redis-context') in settings.js
    files.should.containEql('sqlite-context.js'); // require('@channel-sessions/node-red/sqlite-context') in settings.js
    const stray = files.filter(
      (f) =>
        !/^(dist\/|resources\/|examples\/|README\.md$|LICENSE$|package\.json$|(redis|sqlite)-context\.js$)/.test(f) || f.endsWith('.map') || f.endsWith('.ts'),
    );
    stray.should.eql([]);
  });

  it('runs no script when it is installed, so npm asks no one to approve it (it ships no scripts/ to run)', function () {
    const work = mkdtempSync(join(tmpdir(), 'cs-pack-'));
    try {
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
      const out = execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const tarball = join(work, JSON.parse(out)[0].filename);
      const packed = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
      // The scripts npm runs (or, from npm 11, lists for approval) when it installs a package.
      const atInstall = ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare'];
      should(Object.keys(packed.scripts ?? {}).filter((s) => atInstall.includes(s))).eql([]);
      should(packed.gypfile).not.be.ok();
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
