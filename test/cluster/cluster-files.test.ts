import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';

// The built package, as Node-RED loads it.

const { FileStore } = require('../../../dist/files/file-store.js');

const { MediaLinks } = require('../../../dist/messaging/media-links.js');

describe('files with several instances (channelSessions.fileDirectory shared)', function () {
  let root: string;
  let shared: string;
  let userDirs: string[];

  beforeEach(function () {
    root = mkdtempSync(join(tmpdir(), 'cs-files-'));
    shared = join(root, 'shared');
    userDirs = [join(root, 'a'), join(root, 'b')];
  });
  afterEach(function () {
    rmSync(root, { recursive: true, force: true });
  });

  it('a file a Session kept on one instance is read by another', async function () {
    const [a, b] = userDirs.map((dir) => new FileStore(dir, { fileDirectory: shared }));
    const kept = await a.keep('s1', { name: 'photo.jpg', type: 'image/jpeg', data: Buffer.from('jpeg bytes') });
    (await b.read(kept)).toString().should.equal('jpeg bytes');
    a.workspaceDir.should.equal(join(shared, 'workspace'));
  });

  it('a signed media link made on one instance is served by another, and refused when tampered with', async function () {
    const [a, b] = userDirs.map((dir) => new MediaLinks(dir, shared));
    const link: string = await a.create({ name: 'menu.pdf', type: 'application/pdf', read: async () => Buffer.from('%PDF') }, 3600);
    const found = await b.lookup(link);
    found.status.should.equal(200);
    found.name.should.equal('menu.pdf');
    found.path.should.startWith(join(shared, 'messaging-media'));
    (await b.lookup(link.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')))).status.should.equal(403);
  });

  it('without the setting each instance keeps its own files under its user dir', async function () {
    const [a, b] = userDirs.map((dir) => new MediaLinks(dir));
    const link: string = await a.create({ name: 'x.txt', type: 'text/plain', read: async () => Buffer.from('x') }, 3600);
    should((await b.lookup(link)).status).equal(403); // another install's secret
    new FileStore(userDirs[0]).workspaceDir.should.equal(join(userDirs[0], 'channel-sessions', 'workspace'));
  });
});
