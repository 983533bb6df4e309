import { defineNode } from '../kit/define-node';
import { engineFor } from '../engine/engine';
import type { RED, RedNode } from '../model/red';
import { telcoVoiceBehaviour } from '../voice/behaviour';
import { voiceEnvironments } from '../voice/environment';
import { voiceEnvironmentNode } from '../voice/environment-node';
import { callStartNode } from '../voice/starts';
import { dialNode } from '../voice/tasks/dial';
import { playNode } from '../voice/tasks/play';
import { recordNode } from '../voice/tasks/record';
import { registerVoiceRoutes } from '../voice/routes/webhooks';

/** The voice module: phone calls as Sessions on the TelcoVoice Channel, answered with TwiML. */
export = function registerVoice(RED: RED): void {
  const engine = engineFor(RED);
  engine.registerChannel('voice', telcoVoiceBehaviour(RED));
  voiceEnvironments.followDeploys(RED);
  registerVoiceRoutes(RED, engine);

  const define = (type: string, setUp: (red: RED, node: RedNode, config: any) => void, options?: object) =>
    defineNode(RED, type, (node, config) => setUp(RED, node, config), options);
  define('telco-voice-environment', voiceEnvironmentNode, {
    credentials: {
      accountSid: { type: 'password' },
      authToken: { type: 'password' },
      webhookSigningSecret: { type: 'password' },
      token: { type: 'text' },
    },
  });
  define('telco-call-start', callStartNode);
  define('telco-voice-play', playNode);
  define('telco-voice-record', recordNode);
  define('telco-voice-dial', dialNode);
};
