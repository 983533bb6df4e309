import type { IncomingMessage } from 'node:http';

export class BodyTooLarge extends Error {}

/**
 * Reads the raw request body: signature checks need the exact bytes the provider signed, so these
 * routes use no body parser. A body parsed earlier by middleware is refused rather than guessed at.
 */
export function readRawBody(req: IncomingMessage, limit = 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BodyTooLarge(`request body over ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A form body (`application/x-www-form-urlencoded`) as a plain object; repeated keys keep the last value. */
export function parseForm(raw: Buffer): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) params[key] = value;
  return params;
}
