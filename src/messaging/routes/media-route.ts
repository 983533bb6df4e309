import { contentDisposition } from '../../http/content-disposition';
import { createReadStream } from 'node:fs';
import { routeOnce } from '../../http/routes';
import type { HttpResponse, RED } from '../../model/red';
import { runtimeText } from '../../model/texts';
import { MEDIA_PATH } from '../environment';
import type { MediaLinks } from '../media-links';

/** `GET /api/TelcoModule/Messaging/media/:link`: an outbound file behind a signed, expiring link. */
export function registerMediaRoute(red: RED, links: MediaLinks): void {
  routeOnce(red, 'get', `${MEDIA_PATH}:link`, (req, res) => {
    const link = String(req.params.link);
    // Nobody watches this route but the provider fetching media: a failure must reach the log.
    const fail = (err: Error) => {
      red.log.error(`[channel-sessions] ${runtimeText(red, 'messaging', 'runtime.log.mediaFailed', { link: linkId(link), message: err.message })}`);
      if (!res.headersSent) res.status(500).type('text/plain').send('media unavailable');
      else res.destroy();
    };
    void links
      .lookup(link)
      .then((found) => {
        if (found.status !== 200) {
          res.status(found.status).type('text/plain').send(found.reason);
          return;
        }
        setFileHeaders(res, found);
        const stream = createReadStream(found.path);
        stream.on('error', fail);
        stream.pipe(res);
      })
      .catch(fail);
  });
}

function setFileHeaders(res: HttpResponse, file: { name: string; type: string; size: number }): void {
  res.status(200);
  res.set('Content-Type', file.type || 'application/octet-stream');
  res.set('Content-Length', String(file.size));
  // RFC 6266: `filename*` carries any name (résumé-файл.pdf), with an ASCII `filename` fallback.
  res.set('Content-Disposition', contentDisposition(file.name, shownInline(file.type) ? 'inline' : 'attachment'));
  // The type is the file's own (a person's upload, a name's extension): a browser may not guess another.
  res.set('X-Content-Type-Options', 'nosniff');
  res.set('Cache-Control', 'private, max-age=3600');
}

/**
 * Whether a browser may show the file in the page: only types that run nothing. This route shares
 * its origin with the editor (httpNodeRoot and httpAdminRoot share the host by default), so a web
 * page or an SVG drawing shown there would run its scripts beside the editor's login; they, and
 * any type not listed, are downloads. The provider fetching media reads the type, not this.
 */
function shownInline(type: string): boolean {
  const bare = type.split(';')[0].trim().toLowerCase();
  if (bare === 'image/svg+xml') return false;
  return /^(image|audio|video)\//.test(bare) || bare === 'application/pdf' || bare === 'text/plain';
}

/** The link's file id only: the rest of the link is its signature. */
function linkId(link: string): string {
  return /^[0-9a-f]{32}/.exec(link)?.[0] ?? '(not a link)';
}
