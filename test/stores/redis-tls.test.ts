import { execFile } from 'node:child_process';
import { join } from 'node:path';
import 'should';
import { REPO_ROOT } from '../harness/node-red';
import { RedisServer } from '../harness/redis';

/**
 * A store on `rediss://` in a process of its own, trusting the test CA the way a user trusts a
 * private CA (NODE_EXTRA_CA_CERTS), or not trusting it.
 */
function tryStore(url: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const script = `
    const redisContext = require(${JSON.stringify(join(REPO_ROOT, 'redis-context.js'))});
    const lines = [];
    const log = { info: (l) => lines.push(l), warn: (l) => lines.push(l), error: (l) => lines.push(l) };
    (async () => {
      const store = redisContext.sessionStoreFor({ url: process.env.URL }, log);
      const connected = await store.whenConnected(3000);
      let recorded = null;
      try { recorded = await store.record({ environment: 'e', conversation: 'c', kind: 'message', payload: { tls: true } }); } catch (err) { lines.push(err.name + ': ' + err.message); }
      const item = connected ? await store.next({ environment: 'e', conversation: 'c' }) : null;
      await store.close();
      console.log(JSON.stringify({ connected, recorded, payload: item && item.payload, lines }));
    })();`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', script], { env: { ...process.env, URL: url, ...env }, timeout: 20000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr });
    });
  });
}

describe('the Redis store over TLS (rediss://)', function () {
  this.timeout(30000);
  let redis: RedisServer;
  before(async function () {
    redis = await RedisServer.start({ tls: true, password: 'tls-pa55' });
  });
  after(async function () {
    await redis?.close();
  });

  it('connects, records and reads back when the CA is trusted', async function () {
    redis.url.should.startWith('rediss://');
    const { code, out } = await tryStore(redis.url, { NODE_EXTRA_CA_CERTS: redis.caFile });
    code!.should.equal(0, out);
    const result = JSON.parse(out.trim().split('\n').pop()!);
    result.connected.should.be.true();
    result.payload.should.eql({ tls: true });
  });

  it('refuses a server whose certificate it cannot trust: StoreUnavailable, a log line without the password, no crash', async function () {
    const { code, out } = await tryStore(redis.url, {});
    code!.should.equal(0, out);
    const result = JSON.parse(out.trim().split('\n').pop()!);
    result.connected.should.be.false();
    result.lines
      .join('\n')
      .should.match(/StoreUnavailable/)
      .and.match(/Redis at rediss:\/\/127\.0\.0\.1:\d+ is unavailable/)
      .and.not.match(/tls-pa55/);
  });
});
