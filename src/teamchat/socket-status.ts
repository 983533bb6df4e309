import { engineFor, type EnvironmentNote } from '../engine/engine';
import type { RED } from '../model/red';
import type { TeamChatEnvironment } from './environment';
import type { TeamChatInbound } from './receive';
import type { SocketModeConnection, SocketState } from './socket-mode';

const NOTES: Record<SocketState, EnvironmentNote> = {
  connecting: { fill: 'yellow', text: 'Socket Mode connecting' },
  connected: { fill: 'green', text: 'Socket Mode connected' },
  reconnecting: { fill: 'yellow', text: 'Socket Mode reconnecting' },
  refused: { fill: 'red', text: 'Socket Mode refused' },
};

/**
 * Opens an Environment's Socket Mode connection and makes its state visible: config nodes show
 * no status, so it appears on the status of the Environment's start nodes, and each change goes
 * to the deploy log once (a refused token tried again every few minutes does not fill the log).
 */
export function watchSocketMode(red: RED, env: TeamChatEnvironment, inbound: TeamChatInbound): { close(): Promise<void> } {
  const engine = engineFor(red);
  let last = '';
  const report = (state: SocketState, detail: string, short?: string) => {
    const note = NOTES[state];
    engine.noteEnvironment(env.id, short ? { ...note, text: `${note.text}: ${short}` } : note);
    const line = `Socket Mode ${state}: ${detail}`;
    if (line === last) return;
    last = line;
    if (state === 'refused') env.node.warn(line);
    else env.node.log(line);
  };
  if (!env.appToken) {
    report('refused', 'there is no App-Level Token (xapp-); add it in the Environment, or turn Socket Mode off', 'no App-Level Token');
    return { close: () => Promise.resolve() };
  }
  const loaded = socketModeModule();
  if (typeof loaded === 'string') {
    report('refused', loaded, 'needs a newer Node.js');
    return { close: () => Promise.resolve() };
  }
  const connection = new loaded.SocketModeConnection(env.appToken, env.settings.apiUrl, {
    receive: (payload, options) => inbound.receive(env, payload, options),
    state: report,
    debug: (line) => env.node.debug(line),
  });
  connection.start();
  return connection;
}

/**
 * socket-mode.ts, loaded only when an Environment uses Socket Mode: Slack's Socket Mode client
 * needs undici 8 (its WebSocket), which needs Node.js 22.19, above the package's own floor. On an
 * older Node only Socket Mode is missing; the Event and Interactivity URLs work as before.
 */
function socketModeModule(): { SocketModeConnection: typeof SocketModeConnection } | string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('./socket-mode') as { SocketModeConnection: typeof SocketModeConnection };
  } catch (err) {
    return `Socket Mode needs Node.js 22.19 or later (Slack's Socket Mode client cannot load on Node.js ${process.version}: ${(err as Error).message}); use the Event URL instead, or a newer Node`;
  }
}
