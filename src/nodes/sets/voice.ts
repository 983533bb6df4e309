import { defineNode } from '../../kit/define-node';
import type { RED, RedNode } from '../../model/red';
import { telcoVoiceBehaviour } from '../../voice/behaviour';
import { voiceEnvironmentNode } from '../../voice/environment-node';
import { callStartNode } from '../../voice/starts';
import { dialNode } from '../../voice/tasks/dial';
import { playNode } from '../../voice/tasks/play';
import { recordNode } from '../../voice/tasks/record';
import { registerVoiceRoutes } from '../../voice/routes/webhooks';
import { voiceModuleFor, type VoiceModule } from '../../voice/voice-module';
import { registerRelayRoute } from '../../voice/agent/relay-route';
import { agentNode } from '../../voice/tasks/agent';
import { agentSayNode } from '../../voice/tasks/agent-say';
import { callOutNode } from '../../voice/call-out';

/** The voice module: phone calls as Sessions on the TelcoVoice Channel, answered with TwiML. */
export = function registerVoice(RED: RED): void {
  const voice = voiceModuleFor(RED);
  voice.engine.registerChannel('voice', telcoVoiceBehaviour(voice));
  voice.environments.followDeploys(RED);
  registerVoiceRoutes(voice);
  registerRelayRoute(voice);

  const define = (type: string, setUp: (voice: VoiceModule, node: RedNode, config: any) => void, options?: object) =>
    defineNode(RED, type, (node, config) => setUp(voice, node, config), options);
  define('telco-voice-environment', voiceEnvironmentNode, {
    credentials: {
      accountSid: { type: 'password' },
      authToken: { type: 'password' },
      webhookSigningSecret: { type: 'password' },
      token: { type: 'text' },
    },
  });
  define('telco-call-start', (voice, node, config) => callStartNode(voice.red, node, config));
  define('telco-voice-play', playNode);
  define('telco-voice-record', recordNode);
  define('telco-voice-dial', dialNode);
  define('telco-call-out', callOutNode);
  define('telco-voice-agent', agentNode);
  define('telco-voice-agent-say', agentSayNode);
};
