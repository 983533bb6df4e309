import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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
});
