import { createServer, type Server, type ServerResponse } from 'node:http';

/** A step the test holds open: the flow's `http request` waits here until the test releases it. */
export class Hold {
  calls = 0;
  port = 0;
  private waiting: ServerResponse[] = [];
  private opened = false;
  private server: Server | undefined;

  async start(): Promise<void> {
    this.server = createServer((_req, res) => {
      this.calls += 1;
      if (this.opened) res.end('done');
      else this.waiting.push(res);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** Releases every held request and answers the later ones at once. */
  open(): void {
    this.opened = true;
    this.release();
  }

  release(): void {
    for (const res of this.waiting.splice(0)) res.end('done');
  }

  async close(): Promise<void> {
    this.release();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
