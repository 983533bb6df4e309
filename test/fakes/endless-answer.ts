import type { ServerResponse } from 'node:http';

/** Far past any API answer the package reads, so a client that reads it all shows no cap. */
const ENDLESS_BYTES = 64 * 1024 * 1024;

/**
 * An answer that never seems to end, as a misbehaving proxy or emulator at `apiUrl` might send:
 * the status, JSON that opens and then padding in 64 KB pieces, as fast as the client reads, up
 * to 64 MB. Resolves true when the client closed the connection before the end.
 */
export async function endlessAnswer(res: ServerResponse, status: number, opening: string): Promise<boolean> {
  let closed = false;
  res.on('close', () => {
    closed = !res.writableFinished;
  });
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.write(opening);
  const piece = Buffer.alloc(64 * 1024, 'x');
  for (let sent = 0; sent < ENDLESS_BYTES; sent += piece.length) {
    if (closed || res.destroyed) return true;
    if (!res.write(piece)) {
      await new Promise<void>((resolve) => {
        const go = () => {
          res.off('drain', go);
          res.off('close', go);
          resolve();
        };
        res.on('drain', go);
        res.on('close', go);
      });
    }
  }
  if (closed || res.destroyed) return true;
  await new Promise<void>((resolve) => res.end('"}', resolve));
  return false;
}
