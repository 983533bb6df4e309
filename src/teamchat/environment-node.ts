import { apiUrlSetting, ENVIRONMENT_WARNINGS, needsLine, setUpStatus, urlLine, type Need } from '../kit/environment-warnings';
import type { RED, RedNode } from '../model/red';
import { EVENT_PATH, INTERACT_PATH, MODULE_KEY, START_PATH, TeamChatEnvironment } from './environment';
import type { TeamChatModule } from './teamchat-module';
import { watchSocketMode } from './socket-status';
import { runtimeText } from '../model/texts';

/**
 * The `teamchat-environment` config node: attaches to the engine, tells the log where Slack must
 * call, and with Socket Mode on opens the connection (closed again on redeploy).
 */
export function setUpEnvironment(red: RED, node: RedNode, config: Record<string, unknown>, teamchat: TeamChatModule): TeamChatEnvironment {
  const env = new TeamChatEnvironment(red, node, config);
  teamchat.engine.attachEnvironment({
    id: node.id,
    name: env.name,
    moduleKey: MODULE_KEY,
    sessionStore: env.settings.sessionStore || undefined,
    maxSessions: env.settings.maxSessions,
    context: node.context(),
  });
  teamchat.environments.add(env, env.token || undefined);
  if (!env.token) node.warn(ENVIRONMENT_WARNINGS.noToken(red));
  else {
    if (!env.settings.socketMode) {
      node.log(urlLine(red, 'Event', env.routeUrl(EVENT_PATH), !!env.settings.publicBaseUrl));
      node.log(urlLine(red, 'Interactivity', env.routeUrl(INTERACT_PATH), !!env.settings.publicBaseUrl));
    }
    node.log(urlLine(red, 'Start', env.routeUrl(START_PATH), !!env.settings.publicBaseUrl));
  }
  const missing = missingTeamChatCredentials(red, env);
  const line = needsLine(
    red,
    missing.map((m) => m.need),
  );
  if (line) node.warn(line);
  const unusable = [apiUrlSetting(red, env.settings.apiUrl, runtimeText(red, 'teamchat', 'runtime.log.noBotToken'))].filter((u) => u !== undefined);
  teamchat.engine.noteMissing(env.id, setUpStatus(red, node, missing, unusable));
  const socket = env.settings.socketMode ? watchSocketMode(red, env, teamchat.inbound) : undefined;
  node.on('close', (removed, done) => {
    env.statuses.stopAll();
    if (removed) teamchat.assistant.forget(env.id);
    teamchat.environments.remove(env);
    if (removed) teamchat.engine.removeEnvironment(env.id);
    if (!socket) {
      done();
      return;
    }
    void socket.close().then(() => done());
  });
  return env;
}

/**
 * What this Environment lacks for Slack, in the words every Environment uses for what its nodes
 * need: the Bot Token to post, the Signing Secret to check requests (at the Event URL, or in Socket
 * Mode only at the Start URL). A missing App-Level Token in Socket Mode is said by the
 * connection's own red status and log line (socket-status.ts), not twice.
 */
function missingTeamChatCredentials(red: RED, env: TeamChatEnvironment): Array<{ field: string; need: Need }> {
  const text = (key: string) => runtimeText(red, 'teamchat', key);
  const missing: Array<{ field: string; need: Need }> = [];
  if (!env.botToken) {
    missing.push({
      field: 'Bot Token',
      need: { who: text('runtime.log.postingTasks'), plural: true, fields: [text('runtime.log.theBotToken')], purpose: text('runtime.log.withoutBotToken') },
    });
  }
  if (!env.signingSecret) {
    const socket = env.settings.socketMode;
    missing.push({
      field: 'Signing Secret',
      need: {
        who: text(socket ? 'runtime.log.theStartUrl' : 'runtime.log.theEventUrl'),
        fields: [text('runtime.log.theSigningSecret')],
        purpose: text(socket ? 'runtime.log.toTakeStarts' : 'runtime.log.toTakeEvents'),
      },
    });
  }
  return missing;
}
