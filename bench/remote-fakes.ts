import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from '../test/harness/node-red';
import type { Delivery } from './fake-apis';

/** The fake APIs running in their own process (bench/fake-apis-process.ts). */
export class RemoteFakes {
  private constructor(
    private readonly child: ReturnType<typeof spawn>,
    readonly port: number,
  ) {}

  static async start(): Promise<RemoteFakes> {
    const child = spawn(process.execPath, [join(__dirname, 'fake-apis-process.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((resolve) =>
      child.stdout?.on('data', (d: Buffer) => {
        const m = /PORT (\d+)/.exec(d.toString());
        if (m) resolve(Number(m[1]));
      }),
    );
    return new RemoteFakes(child, port);
  }

  get slackUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  get twilioUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async deliveredSince(t: number): Promise<Delivery[]> {
    return (await request(`http://127.0.0.1:${this.port}/__deliveries?since=${t}`, 'GET')).body;
  }

  async waitFor(to: string, since: number): Promise<void> {
    const res = await request(`http://127.0.0.1:${this.port}/__wait?to=${encodeURIComponent(to)}&since=${since}`, 'GET');
    if (res.status !== 200) throw new Error(`no reply reached ${to}`);
  }

  async stop(): Promise<void> {
    this.child.kill();
  }
}
