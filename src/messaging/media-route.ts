import { createReadStream } from 'node:fs';
import { routeOnce } from '../engine/http/routes';
import type { RED } from '../engine/red';
import { MEDIA_PATH } from './environment';
import type { MediaLinks } from './media-links';

/** `GET /api/TelcoModule/Messaging/media/:link`: an outbound file behind a signed, expiring link. */
export function registerMediaRoute(red: RED, links: MediaLinks): void {
  routeOnce(red, 'get', `${MEDIA_PATH}:link`, (req, res) => {
    void links.lookup(req.params.link).then((found) => {
      if (found.status !== 200) {
        res.status(found.status).type('text/plain').send(found.reason);
        return;
      }
      res.status(200);
      res.set('Content-Type', found.type || 'application/octet-stream');
      res.set('Content-Length', String(found.size));
      res.set('Content-Disposition', `inline; filename="${found.name.replace(/["\\\r\n]/g, '_')}"`);
      res.set('Cache-Control', 'private, max-age=3600');
      const stream = createReadStream(found.path);
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    }).catch(() => {
      if (!res.headersSent) res.status(500).type('text/plain').send('media unavailable');
    });
  });
}
