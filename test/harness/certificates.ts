import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A test CA (`ca.pem`) and a server certificate for 127.0.0.1 it signed (`server.pem`,
 * `server.key`), made with openssl in `dir` once: a directory that has them keeps them.
 */
export function makeTestCertificates(dir: string): { ca: string; cert: string; key: string } {
  const at = (f: string) => join(dir, f);
  try {
    readFileSync(at('server.pem'));
  } catch {
    const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
    run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2', '-subj', '/CN=channel-sessions test CA');
    run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=127.0.0.1');
    writeFileSync(at('ext'), 'subjectAltName=IP:127.0.0.1\n');
    run(
      'x509',
      '-req',
      '-in',
      at('server.csr'),
      '-CA',
      at('ca.pem'),
      '-CAkey',
      at('ca.key'),
      '-CAcreateserial',
      '-out',
      at('server.pem'),
      '-days',
      '2',
      '-extfile',
      at('ext'),
    );
  }
  return { ca: at('ca.pem'), cert: at('server.pem'), key: at('server.key') };
}
