import { textOf } from '../../model/text';
import type { Engine } from '../../engine/engine';
import { TaskError } from '../../model/errors';
import type { IncomingFile } from '../../files/intake';
import { typeFromName } from '../../files/mime';
import type { HttpRequest, HttpResponse, RED } from '../../model/red';
import { detail, lineOf, summary } from '../session-views';
import { STALE_ANSWER, isStaleAnswer } from '../stale-answer';

/** How long ending a Session waits for a step in progress before it answers 202 (the end is recorded, and follows the step). */
const END_ANSWER_WAIT_MS = 2000;

const ROOT = '/channel-sessions';
/** Where the test Sessions' answers still being written are published (Stream reply's drafts). */
const DRAFTS_TOPIC = 'channel-sessions/test-drafts';

/**
 * The runtime side of the Test chat and Sessions sidebar, on httpAdmin behind the editor's
 * permissions (`channel-sessions.read` / `.write`). Changes are pushed over comms:
 * `channel-sessions/session/<id>` (a transcript line or state), `channel-sessions/sessions`, and
 * `channel-sessions/test-drafts` (a test Session's answer still being written, with its text so far).
 */

export function registerAdminRoutes(red: RED, engine: Engine): void {
  const read = red.auth.needsPermission('channel-sessions.read');
  const write = red.auth.needsPermission('channel-sessions.write');

  red.httpAdmin.get(`${ROOT}/processes`, read, (_req, res) => {
    const processes = new Map<string, { id: string; label: string; starts: unknown[] }>();
    red.nodes.eachNode((n) => {
      if (n.type === 'tab') processes.set(n.id, { id: n.id, label: String(n.label ?? n.id), starts: [] });
    });
    for (const start of engine.allStarts()) {
      const process = processes.get(start.node.z ?? '');
      process?.starts.push({
        id: start.node.id,
        type: start.node.type,
        name: start.node.name ?? '',
        channel: start.kind.channel,
        // The Channels its test data may pick when the Test chat plays it (Text out: SMS or WhatsApp).
        plays: start.kind.plays?.channels ?? null,
        environment: start.environment ?? null,
        variable: start.variable,
        testData: start.testData,
      });
    }
    res.json([...processes.values()].filter((p) => p.starts.length));
  });

  red.httpAdmin.post(`${ROOT}/test-sessions`, write, (req, res) => {
    const body = (req.body ?? {}) as { start?: unknown; testData?: Record<string, unknown>; mode?: unknown; replaces?: unknown };
    if (typeof body.start !== 'string') {
      res.status(400).json({ error: 'start (the id of a start node) is required' });
      return;
    }
    if (body.mode !== undefined && body.mode !== 'chat' && body.mode !== 'channel') {
      res.status(400).json({ error: 'mode is "chat" (the Chat Channel) or "channel" (the start\'s own Channel, simulated)' });
      return;
    }
    const start = body.start;
    void (async () => {
      // Restart: the Session it replaces ends first, so a Process never keeps an abandoned test Session waiting.
      if (typeof body.replaces === 'string' && body.replaces) {
        const previous = await engine.findSession(body.replaces);
        if (previous?.isTest && (previous.state === 'running' || previous.state === 'waiting')) {
          await engine.end(previous, 'Restarted from the Test chat in the editor');
        }
      }
      const session = await engine.startTest(start, body.testData, { asChannel: body.mode === 'channel' });
      res.status(201).json(await detail(engine, session));
    })().catch((err: Error) => res.status(err instanceof TaskError ? 404 : 500).json({ error: err.message }));
  });

  red.httpAdmin.post(
    `${ROOT}/test-sessions/:id/messages`,
    write,
    (req, res) =>
      void (async () => {
        const session = await engine.findSession(req.params.id);
        if (!session?.isTest) {
          res.status(404).json({ error: 'No test Session with that id' });
          return;
        }
        let files: IncomingFile[];
        try {
          files = chatFiles((req.body as { files?: unknown })?.files);
        } catch (err) {
          res.status(400).json({ error: (err as Error).message });
          return;
        }
        const text = textOf((req.body as { text?: unknown } | undefined)?.text);
        let button: { payload: string; text: string } | undefined;
        try {
          button = tappedButton((req.body as { button?: unknown })?.button);
        } catch (err) {
          res.status(400).json({ error: (err as Error).message });
          return;
        }
        // Staying silent on a call: what its Gather reports when the caller neither speaks nor presses a
        // key (a Task with "no reply after" takes its no-reply output, any other its error branch).
        if ((req.body as { silent?: unknown } | undefined)?.silent === true) {
          if (session.channel !== 'TelcoVoice') {
            res.status(400).json({ error: 'Only a call can stay silent: this test Session does not play a phone call' });
            return;
          }
          const accepted = await engine.deliverToSession(session.id, {
            text: '',
            files: [],
            data: { speech: '', digits: '' },
            noReply: true,
            error: { code: 4009, message: 'The caller neither spoke nor pressed a key' },
          });
          res.status(accepted ? 200 : 409).json({ accepted, ...(await detail(engine, (await engine.findSession(session.id)) ?? session)) });
          return;
        }
        if (button && (await isStaleAnswer(engine, session, (req.body as { asked?: unknown }).asked))) {
          res.status(409).json({ accepted: false, stale: true, error: STALE_ANSWER });
          return;
        }
        // A tapped WhatsApp button arrives as the provider sends it: its text, and its payload beside it.
        const accepted = await engine.deliverToSession(session.id, { text: button ? button.text : text, files, ...(button ? { data: { button } } : {}) });
        res.status(accepted ? 200 : 409).json({ accepted, ...(await detail(engine, (await engine.findSession(session.id)) ?? session)) });
      })().catch((err: Error) => res.status(500).json({ error: err.message })),
  );

  red.httpAdmin.get(
    `${ROOT}/sessions`,
    read,
    (req, res) =>
      void (async () => {
        const { environment, channel } = req.query as Record<string, string | undefined>;
        const includeEnded = req.query.ended === 'true';
        const sessions = [...(await engine.liveSessions()), ...(includeEnded ? engine.endedSessions() : [])].filter(
          (s) => (!environment || s.environment === environment) && (!channel || s.channel === channel),
        );
        res.json(sessions.map((s) => summary(engine, s)));
      })().catch((err: Error) => res.status(500).json({ error: err.message })),
  );

  red.httpAdmin.get(`${ROOT}/stats`, read, (_req, res) => {
    // With --expose-gc the figure is the live heap, which the benchmark divides per Session.
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) gc();
    void engine.liveCount().then(
      (live) => {
        const { heapUsed, rss } = process.memoryUsage();
        res.json({ live, heapUsed, rss, gc: Boolean(gc) });
      },
      (err: Error) => res.status(500).json({ error: err.message }),
    );
  });

  red.httpAdmin.get(`${ROOT}/sessions/:id`, read, (req, res) => {
    void engine
      .findSession(req.params.id)
      .then(async (session) => {
        if (!session) res.status(404).json({ error: 'No Session with that id' });
        else res.json(await detail(engine, session));
      })
      .catch((err: Error) => res.status(500).json({ error: err.message }));
  });

  red.httpAdmin.delete(
    `${ROOT}/sessions/:id`,
    write,
    (req: HttpRequest, res: HttpResponse) =>
      void (async () => {
        const session = await engine.findSession(req.params.id);
        if (!session || (session.state !== 'running' && session.state !== 'waiting')) {
          res.status(404).json({ error: 'No live Session with that id' });
          return;
        }
        // The Test chat's End button and the Sessions view end Sessions alike; the log says which.
        const where = req.query.from === 'test-chat' ? 'the Test chat' : 'the Sessions view';
        // The end is recorded before the wait: it happens once the step in progress (a slow node, a
        // model answering) is over. The editor is answered at once after a short wait, not held.
        const ended = await engine.end(session, `Ended from ${where} in the editor`);
        const done = await Promise.race([ended.done.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), END_ANSWER_WAIT_MS).unref())]);
        const now = (await engine.findSession(session.id)) ?? session;
        if (done) res.json(summary(engine, now));
        else res.status(202).json({ ...summary(engine, now), ending: true });
      })().catch((err: Error) => res.status(500).json({ error: err.message })),
  );

  let pending: NodeJS.Timeout | undefined;
  engine.onSessionEvent((event) => {
    if (event.session.isTest && event.type === 'draft') {
      // An answer still being written, with its text so far: the chat grows its bubble without reading the Session,
      // also for a Session whose start has not returned yet (the chat knows it by its Process).
      const entry = event.entry as { text?: string; at?: number } | undefined;
      const { id, process, channel } = event.session;
      red.comms.publish(DRAFTS_TOPIC, { session: id, process, channel, draft: { text: entry?.text ?? '', at: entry?.at ?? Date.now() } }, false);
      return;
    }
    if (event.session.isTest) {
      red.comms.publish(`channel-sessions/session/${event.session.id}`, { state: event.session.state, line: lineOf(event) ?? null }, false);
    }
    if (event.type === 'state' && !pending) {
      pending = setTimeout(() => {
        pending = undefined;
        void engine.liveCount().then(
          (live) => red.comms.publish('channel-sessions/sessions', { live }, false),
          () => undefined,
        );
      }, 1000);
      pending.unref();
    }
  });
}

function chatFiles(raw: unknown): IncomingFile[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new Error('files must be a list of {name, type, data (base64)}');
  return raw.map((f: { name?: unknown; type?: unknown; data?: unknown }, i) => {
    if (typeof f?.data !== 'string') throw new Error(`files[${i}].data must be base64 text`);
    const name = typeof f.name === 'string' && f.name ? f.name : `file-${i + 1}`;
    const data = Buffer.from(f.data, 'base64');
    return { name, type: typeof f.type === 'string' && f.type ? f.type : typeFromName(name), size: data.length, fetch: async () => data };
  });
}

/** A button tapped in a buttons preview: `{payload, text}`, each a string of at most 200 characters. */
function tappedButton(raw: unknown): { payload: string; text: string } | undefined {
  if (raw === undefined || raw === null) return undefined;
  const b = raw as { payload?: unknown; text?: unknown };
  const ok = (v: unknown) => typeof v === 'string' && v.length <= 200;
  if (typeof raw !== 'object' || !ok(b.payload) || !ok(b.text)) throw new Error('button must be {payload, text}, strings of at most 200 characters');
  return { payload: b.payload as string, text: b.text as string };
}
