import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Backend {
  /** What the tests call it in failures ("a", "b"). */
  name: string;
  port: number;
}

/**
 * A load balancer for tests: every request goes to a backend chosen at random (no sticky
 * sessions), with the Host header kept as the provider sent it (what nginx's
 * `proxy_set_header Host $host` does, so signed URLs still match). A backend that refuses the
 * connection is skipped and the request goes to another, as nginx's `proxy_next_upstream error`
 * does; a backend that dies with the request in flight answers 502, as nginx would.
 */
export class RandomProxy {
  /** Which backend served each request, in order (for the tests that want to see both used). */
  readonly served: string[] = [];
  private server: Server | undefined;
  private port = 0;
  private random: () => number = Math.random;

  constructor(private backends: Backend[]) {}

  async listen(): Promise<void> {
    const server = createServer((req, res) => void this.forward(req, res));
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  url(path = '/'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Replaces the set of backends (a rolling deploy takes one out, then puts it back). */
  setBackends(backends: Backend[]): void {
    this.backends = backends;
  }

  /** Makes the choice of backend follow a sequence (tests that want rounds to alternate). */
  chooseWith(random: () => number): void {
    this.random = random;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const tried = new Set<string>();
    for (;;) {
      const left = this.backends.filter((b) => !tried.has(b.name));
      if (!left.length) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end('no backend could be reached');
        return;
      }
      const backend = left[Math.floor(this.random() * left.length) % left.length];
      tried.add(backend.name);
      const outcome = await this.send(backend, req, body, res);
      if (outcome !== 'refused') return;
    }
  }

  private send(backend: Backend, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<'done' | 'refused'> {
    return new Promise((resolve) => {
      const upstream = httpRequest(
        {
          host: '127.0.0.1',
          port: backend.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, 'content-length': String(body.length), connection: 'close' },
        },
        (answer) => {
          this.served.push(backend.name);
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.on('end', () => resolve('done'));
          answer.on('error', () => {
            res.destroy();
            resolve('done');
          });
        },
      );
      upstream.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED') {
          resolve('refused');
          return;
        }
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`backend ${backend.name}: ${err.message}`);
        else res.destroy();
        resolve('done');
      });
      upstream.end(body);
    });
  }
}
