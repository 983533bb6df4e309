import { defineNode } from '../kit/define-node';
import { engineFor } from '../engine/engine';
import { captureRawBodies } from '../http/raw-body';
import type { RED, RedNode } from '../model/red';
import { setUpStartNode } from '../kit/start-node';
import { messagingBehaviour } from '../messaging/behaviour';
import { buttonsTask } from '../messaging/tasks/buttons-task';
import { environments, MODULE_KEY } from '../messaging/environment';
import { environmentNode } from '../messaging/environment-node';
import { registerInboundRoute } from '../messaging/routes/inbound-route';
import { MediaLinks } from '../messaging/media-links';
import { registerMediaRoute } from '../messaging/routes/media-route';
import { registerStartRoute } from '../messaging/routes/start-route';
import { messagingStartKind } from '../messaging/starts';

/** The messaging module's node set: SMS and messenger conversations over the telephony provider. */
export = function registerMessaging(RED: RED): void {
  const engine = engineFor(RED);
  const links = new MediaLinks(String(RED.settings.userDir ?? process.cwd()), (RED.settings.channelSessions as { fileDirectory?: unknown } | undefined)?.fileDirectory);
  const root = () => RED.settings.httpNodeRoot as string | undefined;
  engine.registerChannel(MODULE_KEY, messagingBehaviour('TelcoMessagingSms', links, root));
  engine.registerChannel(MODULE_KEY, messagingBehaviour('TelcoMessagingMessenger', links, root));
  // Signatures cover the raw form bytes: keep them before the admin app's body parsers run.
  captureRawBodies(RED, '/api/TelcoModule/Messaging/');
  environments.followDeploys(RED);
  registerInboundRoute(RED, engine);
  registerMediaRoute(RED, links);
  registerStartRoute(RED, engine);

  const define = (type: string, setUp: (node: RedNode, config: any) => void, options?: object) => defineNode(RED, type, setUp, options);
  define('telco-messaging-environment', (node, config) => environmentNode(RED, node, config), {
    credentials: {
      accountSid: { type: 'password' },
      authToken: { type: 'password' },
      webhookSigningSecret: { type: 'password' },
      token: { type: 'text' },
    },
  });
  for (const kind of ['sms', 'messenger'] as const) {
    const startKind = messagingStartKind(kind);
    define(startKind.type, (node, config) => setUpStartNode(
      RED, node, { ...config, variable: config.variable || 'message' }, startKind, { environment: config.environment, environmentType: 'telco-messaging-environment' },
    ));
  }
  define('telco-messenger-buttons', (node, config) => buttonsTask(RED, node, config, links));
};
