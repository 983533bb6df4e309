import should from 'should';
import { createServer as createHttpServer, request as httpRequest, type RequestOptions } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterUnsentFault, neverSent } from '../../src/http/provider-retry';
import { freePort } from '../harness/node-red';

/** The error Node's http client gives for one POST. */
function postError(url: string, options: RequestOptions = {}): Promise<Error> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', ...options }, () => reject(new Error('answered')));
    req.on('error', resolve);
    req.end('a=1');
  });
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** Which connection faults Node reports before a request could be written, from real sockets on loopback. */
describe('provider retries: a request that certainly never reached the provider (neverSent)', function () {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));

  it('a refused connection: never sent, tried again', async () => {
    const err = await postError(`http://127.0.0.1:${await freePort()}/`);
    should(neverSent(err)).be.true();
    should(afterUnsentFault(err, 1)).have.property('retryInMs');
  });

  it('every address of the host refused (an AggregateError): never sent', async () => {
    const port = await freePort();
    const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
      options.all
        ? callback(null, [
            { address: '127.0.0.1', family: 4 },
            { address: '::1', family: 6 },
          ])
        : callback(null, '127.0.0.1', 4)) as RequestOptions['lookup'];
    const err = await postError(`http://several.test:${port}/`, { lookup, autoSelectFamily: true } as RequestOptions);
    should(neverSent(err)).be.true();
  });

  it('a close after the request was read ("socket hang up"): maybe sent, not tried again', async () => {
    const server = createHttpServer((req) => req.resume().on('end', () => req.socket.destroy()));
    servers.push(server);
    const err = await postError(await listening(server));
    should((err as { code?: string }).code).equal('ECONNRESET');
    should(neverSent(err)).be.false();
    should(afterUnsentFault(err, 1)).be.undefined();
  });

  it('a reset once data came in (read ECONNRESET): maybe sent', async () => {
    const server = createServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    servers.push(server);
    const err = await postError(await listening(server));
    should(neverSent(err)).be.false();
  });
});
