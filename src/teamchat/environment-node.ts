import { ENVIRONMENT_WARNINGS } from '../kit/environment-warnings';
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
      node.log(runtimeText(red, 'teamchat', 'runtime.log.eventUrl', { url: env.routeUrl(EVENT_PATH) }));
      node.log(runtimeText(red, 'teamchat', 'runtime.log.interactivityUrl', { url: env.routeUrl(INTERACT_PATH) }));
    }
    node.log(runtimeText(red, 'teamchat', 'runtime.log.startUrl', { url: env.routeUrl(START_PATH) }));
  }
  if (!env.botToken) node.warn(ENVIRONMENT_WARNINGS.missingCredential(red, 'Bot Token', runtimeText(red, 'teamchat', 'runtime.log.noBotToken')));
  if (!env.signingSecret) {
    node.warn(
      ENVIRONMENT_WARNINGS.missingCredential(
        red,
        'Signing Secret',
        runtimeText(red, 'teamchat', env.settings.socketMode ? 'runtime.log.noSigningSecretSocket' : 'runtime.log.noSigningSecret'),
      ),
    );
  }
  const socket = env.settings.socketMode ? watchSocketMode(red, env, teamchat.inbound) : undefined;
  node.on('close', (_removed, done) => {
    teamchat.environments.remove(env);
    if (!socket) {
      done();
      return;
    }
    void socket.close().then(() => done());
  });
  return env;
}
