import should from 'should';
import { NodeRed, request } from '../harness/node-red';

describe('admin routes with adminAuth on', function () {
  this.timeout(60000);
  let red: NodeRed;
  before(async function () {
    red = await NodeRed.start({ adminPassword: 'correct horse' });
  });
  after(async () => red?.close());

  for (const [method, path] of [
    ['GET', '/channel-sessions/processes'],
    ['GET', '/channel-sessions/sessions'],
    ['GET', '/channel-sessions/sessions/abc'],
    ['POST', '/channel-sessions/test-sessions'],
    ['POST', '/channel-sessions/test-sessions/abc/messages'],
    ['DELETE', '/channel-sessions/sessions/abc'],
  ] as const) {
    it(`${method} ${path} refuses a caller without a token`, async function () {
      const res = await request(red.url(path), method, method === 'POST' ? { start: 'x' } : undefined);
      should(res.status).equal(401);
    });
  }

  it('answers the editor with a token', async function () {
    const res = await red.admin('GET', '/channel-sessions/sessions');
    should(res.status).equal(200);
    should(res.body).eql([]);
  });
});
