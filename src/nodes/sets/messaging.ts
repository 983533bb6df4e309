import { defineNode } from '../../kit/define-node';
import { captureRawBodies } from '../../http/raw-body';
import type { RED, RedNode } from '../../model/red';
import { setUpStartNode } from '../../kit/start-node';
import { messagingBehaviour } from '../../messaging/behaviour';
import { buttonsTask } from '../../messaging/tasks/buttons-task';
import { MODULE_KEY } from '../../messaging/environment';
import { environmentNode } from '../../messaging/environment-node';
import { registerInboundRoute } from '../../messaging/routes/inbound-route';
import { messagingModuleFor } from '../../messaging/messaging-module';
import { registerMediaRoute } from '../../messaging/routes/media-route';
import { registerStartRoute } from '../../messaging/routes/start-route';
import { registerStatusRoute } from '../../messaging/routes/status-route';
import { textOutKind, textOutTarget, type TextOutConfig } from '../../messaging/text-out';
import { setUpOutNode } from '../../kit/out-node';
import { messagingStartKind } from '../../messaging/starts';

/** The messaging module's node set: SMS and messenger conversations over the telephony provider. */
export = function registerMessaging(RED: RED): void {
  const messaging = messagingModuleFor(RED);
  const { engine, links } = messaging;
  const root = () => RED.settings.httpNodeRoot as string | undefined;
  engine.registerChannel(MODULE_KEY, messagingBehaviour('TelcoMessagingSms', messaging, root));
  engine.registerChannel(MODULE_KEY, messagingBehaviour('TelcoMessagingMessenger', messaging, root));
  // Signatures cover the raw form bytes: keep them before the admin app's body parsers run.
  captureRawBodies(RED, '/api/TelcoModule/Messaging/');
  messaging.environments.followDeploys(RED);
  registerInboundRoute(RED, messaging);
  registerMediaRoute(RED, links);
  registerStartRoute(RED, messaging);
  registerStatusRoute(RED, messaging);

  const define = (type: string, setUp: (node: RedNode, config: any) => void, options?: object) => defineNode(RED, type, setUp, options);
  define('telco-messaging-environment', (node, config) => environmentNode(RED, messaging, node, config), {
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
  define('telco-messenger-buttons', (node, config) => buttonsTask(RED, node, config, messaging));
  define('telco-message-out', (node, config: TextOutConfig) =>
    setUpOutNode(RED, node, { ...config, variable: config.variable || 'message' }, textOutKind(), 'telco-messaging-environment', (msg, environment) =>
      textOutTarget(RED, messaging, node, config, msg, environment),
    ),
  );
};
