import { defineNode } from '../../kit/define-node';
import { wrongEnvironmentKind } from '../../kit/environment-kind';
import type { RED, RedNode } from '../../model/red';
import { bareVariable, setUpStartNode } from '../../kit/start-node';
import { blockMessageTask } from '../../teamchat/tasks/block-message';
import { teamchatBehaviour } from '../../teamchat/behaviour';
import { MODULE_KEY } from '../../teamchat/environment';
import { setUpEnvironment } from '../../teamchat/environment-node';
import { registerEventRoute } from '../../teamchat/routes/event-route';
import { registerInteractRoute } from '../../teamchat/routes/interact-route';
import { notificationTask } from '../../teamchat/tasks/notification';
import { setStatusTask } from '../../teamchat/tasks/set-status';
import { streamReplyTask } from '../../teamchat/tasks/stream-reply';
import { serveAssistantThreads } from '../../teamchat/assistant-start';
import { teamchatModuleFor } from '../../teamchat/teamchat-module';
import { retiredPostMessage } from '../../teamchat/tasks/retired-post-message';
import { TEAMCHAT_START } from '../../teamchat/starts';
import { registerStartRoute } from '../../teamchat/routes/start-route';
import { messageFirstKind, messageFirstTarget, type MessageFirstConfig } from '../../teamchat/message-first';
import { setUpOutNode } from '../../kit/out-node';

/**
 * The team-chat (Slack) module: Environment, start, block message, notification, and the ways in:
 * the event and interactivity URLs and Socket Mode, all through one TeamChatInbound.
 */
export = function registerTeamchat(RED: RED): void {
  const teamchat = teamchatModuleFor(RED);
  teamchat.engine.registerChannel(MODULE_KEY, teamchatBehaviour(teamchat.environments));
  teamchat.environments.followDeploys(RED);
  registerEventRoute(RED, teamchat);
  registerInteractRoute(RED, teamchat);
  registerStartRoute(RED, teamchat);

  const define = (type: string, setUp: (node: RedNode, config: any) => void, options?: object) => defineNode(RED, type, setUp, options);
  define('teamchat-environment', (node, config) => setUpEnvironment(RED, node, config, teamchat), {
    credentials: { botToken: { type: 'password' }, signingSecret: { type: 'password' }, token: { type: 'text' }, appToken: { type: 'password' } },
  });
  define('teamchat-start', (node, config) => {
    const variable = bareVariable(config.variable) || 'teamchat';
    setUpStartNode(RED, node, { ...config, variable }, TEAMCHAT_START, { environment: config.environment, environmentType: 'teamchat-environment' });
    serveAssistantThreads(RED, teamchat, node, config, variable);
  });
  // A Task bound to another kind of Environment posts as if none were selected (the Session's own, or 4008).
  const ownKind = (node: RedNode, config: any) => (wrongEnvironmentKind(RED, node, config.environment, 'teamchat-environment') ? { ...config, environment: '' } : config);
  define('teamchat-block-message', (node, config) => blockMessageTask(RED, teamchat, node, ownKind(node, config)));
  define('teamchat-notification', (node, config) => notificationTask(RED, teamchat, node, ownKind(node, config)));
  define('teamchat-post-message', (node) => retiredPostMessage(RED, node));
  define('teamchat-status', (node, config) => setStatusTask(RED, teamchat, node, config));
  define('teamchat-stream', (node, config) => streamReplyTask(RED, teamchat, node, config));
  define('teamchat-open', (node, config: MessageFirstConfig) =>
    setUpOutNode(RED, node, { ...config, variable: bareVariable(config.variable) || 'teamchat' }, messageFirstKind(), 'teamchat-environment', (msg, environment) =>
      messageFirstTarget(RED, teamchat.environments, node, config, msg, environment),
    ),
  );
};
