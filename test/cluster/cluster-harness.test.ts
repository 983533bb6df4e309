import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import 'should';
import { request } from '../harness/node-red';
import { RandomProxy } from '../harness/proxy';
import { RedisServer } from '../harness/redis';

describe('the cluster test harness', function () {
  describe('a redis-server of its own', function () {
    let redis: RedisServer;
    before(async function () {
      redis = await RedisServer.start();
    });
    after(async function () {
      await redis.close();
    });

    it('answers on its loopback port and keeps what it acknowledged across a restart (AOF)', async function () {
      (await redis.command('SET', 'k', 'kept')).should.equal('+OK');
      await redis.restart();
      (await redis.command('GET', 'k')).should.match(/kept/);
    });

    it('can be taken away and brought back on the same port', async function () {
      await redis.kill();
      redis.running.should.be.false();
      await redis.command('PING').should.be.rejectedWith(/ECONNREFUSED/);
      await redis.start();
      (await redis.command('PING')).should.equal('+PONG');
    });
  });

  it('starts with an ACL user and refuses the default user', async function () {
    const redis = await RedisServer.start({ aclUser: { name: 'flows', password: 's3cret' } });
    try {
      redis.url.should.equal(`redis://flows:s3cret@127.0.0.1:${redis.port}`);
      (await redis.command('PING')).should.equal('+PONG');
    } finally {
      await redis.close();
    }
  });

  describe('a proxy spreading requests at random', function () {
    const servers: Server[] = [];
    let proxy: RandomProxy;
    before(async function () {
      const backends = [];
      for (const name of ['a', 'b']) {
        const server = createServer((req, res) => res.end(`${name} ${req.headers.host}`));
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        servers.push(server);
        backends.push({ name, port: (server.address() as AddressInfo).port });
      }
      proxy = new RandomProxy(backends);
      await proxy.listen();
    });
    after(async function () {
      await proxy.close();
      for (const s of servers) await new Promise((r) => s.close(r));
    });

    it('sends requests to every backend, keeping the Host header the caller sent', async function () {
      const answers = new Set<string>();
      const host = new URL(proxy.url()).host;
      for (let i = 0; i < 40; i++) answers.add((await request(proxy.url('/x'), 'GET')).text);
      [...answers].sort().should.eql([`a ${host}`, `b ${host}`]);
    });

    it('skips a backend that refuses connections', async function () {
      await new Promise((r) => servers[0].close(r));
      for (let i = 0; i < 10; i++) (await request(proxy.url('/x'), 'GET')).text.should.startWith('b ');
    });
  });
});
