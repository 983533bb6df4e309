import { engineFor, type EnvironmentNote } from '../engine/engine';
import { isUsableApiUrl } from '../http/api-url';
import type { RED } from '../model/red';
import { runtimeText } from '../model/texts';
import type { TeamChatEnvironment } from './environment';
import type { TeamChatInbound } from './receive';
import type { SocketModeConnection, SocketState } from './socket-mode';

/** Each state on the start nodes' status (with its short reason, when there is one) and in the log (with its detail). */
function sayState(red: RED, state: SocketState, detail: string, short: string | undefined): { note: EnvironmentNote; line: string } {
  const said = (note: EnvironmentNote, line: string) => ({
    note: short ? { ...note, text: runtimeText(red, 'teamchat', 'runtime.status.socketBecause', { state: note.text, short }) } : note,
    line,
  });
  switch (state) {
    case 'connecting':
      return said(
        { fill: 'yellow', text: runtimeText(red, 'teamchat', 'runtime.status.socketConnecting') },
        runtimeText(red, 'teamchat', 'runtime.log.socketConnecting', { detail }),
      );
    case 'connected':
      return said(
        { fill: 'green', text: runtimeText(red, 'teamchat', 'runtime.status.socketConnected') },
        runtimeText(red, 'teamchat', 'runtime.log.socketConnected', { detail }),
      );
    case 'reconnecting':
      return said(
        { fill: 'yellow', text: runtimeText(red, 'teamchat', 'runtime.status.socketReconnecting') },
        runtimeText(red, 'teamchat', 'runtime.log.socketReconnecting', { detail }),
      );
    case 'refused':
      return said(
        { fill: 'red', text: runtimeText(red, 'teamchat', 'runtime.status.socketRefused') },
        runtimeText(red, 'teamchat', 'runtime.log.socketRefused', { detail }),
      );
  }
}

/**
 * Opens an Environment's Socket Mode connection and makes its state visible: config nodes show
 * no status, so it appears on the status of the Environment's start nodes, and each change goes
 * to the deploy log once (a refused token tried again every few minutes does not fill the log).
 */
export function watchSocketMode(red: RED, env: TeamChatEnvironment, inbound: TeamChatInbound): { close(): Promise<void> } {
  const engine = engineFor(red);
  let last = '';
  const report = (state: SocketState, detail: string, short?: string) => {
    const { note, line } = sayState(red, state, detail, short);
    engine.noteEnvironment(env.id, note);
    if (line === last) return;
    last = line;
    if (state === 'refused') env.node.warn(line);
    else env.node.log(line);
  };
  if (!env.appToken) {
    report('refused', runtimeText(red, 'teamchat', 'runtime.log.socketNoAppToken'), runtimeText(red, 'teamchat', 'runtime.status.socketNoAppToken'));
    return { close: () => Promise.resolve() };
  }
  // Socket Mode asks the Web API for its WebSocket URL: through an unusable API URL it never could.
  if (!isUsableApiUrl(env.settings.apiUrl)) {
    report('refused', runtimeText(red, 'teamchat', 'runtime.log.socketApiUrl'), runtimeText(red, 'teamchat', 'runtime.status.socketApiUrl'));
    return { close: () => Promise.resolve() };
  }
  const loaded = socketModeModule(red);
  if (typeof loaded === 'string') {
    report('refused', loaded, runtimeText(red, 'teamchat', 'runtime.status.socketNeedsNode'));
    return { close: () => Promise.resolve() };
  }
  const connection = new loaded.SocketModeConnection(env.appToken, env.settings.apiUrl, {
    red,
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
function socketModeModule(red: RED): { SocketModeConnection: typeof SocketModeConnection } | string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('./socket-mode') as { SocketModeConnection: typeof SocketModeConnection };
  } catch (err) {
    return runtimeText(red, 'teamchat', 'runtime.log.socketNeedsNode', { version: process.version, message: (err as Error).message });
  }
}
