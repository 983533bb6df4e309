import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP relay between Node-RED and Redis that counts the commands the client sends (RESP arrays),
 * so the benchmark can report Redis round trips per handled message without instrumenting the
 * store. Pipelined commands count one each; commands a Lua script runs inside Redis do not count.
 * It also counts the bytes each way (what a step moves over the network).
 */
export class RespCounter {
  commands = 0;
  /** Bytes sent to Redis, and received from it. */
  bytesToRedis = 0;
  bytesFromRedis = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly redisPort: number) {}

  async listen(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.redisPort, '127.0.0.1');
      this.sockets.add(client).add(upstream);
      const parse = commandParser(() => this.commands++);
      client.on('data', (chunk: Buffer) => {
        parse(chunk);
        this.bytesToRedis += chunk.length;
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        this.bytesFromRedis += chunk.length;
      });
      upstream.pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** Counts top-level RESP arrays in a byte stream split anywhere. */
function commandParser(onCommand: () => void): (chunk: Buffer) => void {
  let buffer: Buffer = Buffer.alloc(0);
  let bulksLeft = 0;
  let bytesLeft = -1; // > -1 while inside a bulk string's payload (+2 for its CRLF)
  return (chunk) => {
    buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
    let at = 0;
    for (;;) {
      if (bytesLeft >= 0) {
        const take = Math.min(bytesLeft, buffer.length - at);
        at += take;
        bytesLeft -= take;
        if (bytesLeft > 0) break;
        bytesLeft = -1;
        bulksLeft--;
        continue;
      }
      const eol = buffer.indexOf('\r\n', at);
      if (eol < 0) break;
      const line = buffer.toString('latin1', at, eol);
      at = eol + 2;
      if (line[0] === '*' && bulksLeft === 0) {
        onCommand();
        bulksLeft = Number(line.slice(1));
      } else if (line[0] === '$') {
        bytesLeft = Number(line.slice(1)) + 2;
      }
    }
    buffer = buffer.subarray(at);
  };
}
