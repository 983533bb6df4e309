import { handRolledFlow } from './hand-rolled-flow';

/**
 * The flows under benchmark: a bare Node-RED baseline, one Process per channel on the durable
 * default store, the same messaging Process on an Environment whose Sessions are kept in
 * memory (its `sessionStore` names a Node-RED `memory` context store), and the messaging job
 * done by hand with core nodes (hand-rolled-flow.ts).
 */
export const CREDS = {
  signingSecret: 'bench-signing-secret',
  botToken: 'xoxb-bench_not_real',
  accountSid: 'AC' + '0'.repeat(32),
  authToken: 'bench-auth-token',
  teamchatToken: 'benchTeamchatToken0000001',
  voiceToken: 'benchVoiceToken00000000001',
  messagingToken: 'benchMessagingToken000001',
  messagingMemoryToken: 'benchMessagingMemory00001',
  agentToken: 'benchAgentToken00000000001',
  calloutToken: 'benchCalloutToken000000001',
};

/** The context store the in-memory messaging Environment names. */
export const MEMORY_STORE = 'memory';

/**
 * settings.js for the runtime under benchmark: a `memory` context store for the in-memory
 * Environment, and SQLite's `synchronous` for the durable default (NORMAL unless FULL is asked).
 */
export function benchSettings(synchronous: 'NORMAL' | 'FULL' = 'NORMAL'): Record<string, unknown> {
  return {
    contextStorage: { default: { module: 'memory' }, [MEMORY_STORE]: { module: 'memory' } },
    // The hand-rolled flow's `twilio` is linked into the user dir: never installed from the network.
    externalModules: { autoInstall: false, palette: { allowInstall: false }, modules: { allowInstall: false } },
    ...(synchronous === 'FULL' ? { channelSessions: { store: { synchronous } } } : {}),
  };
}

export function benchFlows(publicBaseUrl: string, slackApiUrl: string, twilioApiUrl: string): object[] {
  /** A voice Environment of the bench: the fake provider's API and credentials, its own token. */
  const voiceEnvironment = (id: string, name: string, token: string, extra: Record<string, unknown> = {}) => ({
    id,
    type: 'telco-voice-environment',
    name,
    phoneNumberSid: '',
    defaultVoice: '',
    defaultLanguage: '',
    speechModel: '',
    autoDeploy: false,
    validateSignatures: true,
    publicBaseUrl,
    apiUrl: twilioApiUrl,
    sessionStore: '',
    maxSessions: 0,
    ...extra,
    credentials: { accountSid: CREDS.accountSid, authToken: CREDS.authToken, webhookSigningSecret: '', token },
  });
  const w = (id: string) => [[id]];
  return [
    { id: 'tBase', type: 'tab', label: 'Baseline' },
    { id: 'base-in', type: 'http in', z: 'tBase', url: '/bench/baseline', method: 'post', wires: w('base-out') },
    { id: 'base-out', type: 'http response', z: 'tBase', statusCode: '200', wires: [] },

    {
      id: 'envM',
      type: 'telco-messaging-environment',
      name: 'bench messaging',
      messagingServiceSid: '',
      autoDeploy: false,
      validateSignatures: true,
      publicBaseUrl,
      apiUrl: twilioApiUrl,
      sessionStore: '',
      maxSessions: 0,
      credentials: { accountSid: CREDS.accountSid, authToken: CREDS.authToken, webhookSigningSecret: '', token: CREDS.messagingToken },
    },
    { id: 'tMsg', type: 'tab', label: 'Messaging' },
    { id: 'm-start', type: 'telco-sms-start', z: 'tMsg', environment: 'envM', variable: 'message', wires: w('m-ask') },
    { id: 'm-ask', type: 'input-task', z: 'tMsg', prompt: '', resultVariable: 'answer', filesVariable: '', timeout: 0, wires: [['m-say'], []] },
    { id: 'm-say', type: 'output-task', z: 'tMsg', text: 'You said {answer}', attachments: '', wires: [['m-ask'], []] },

    {
      id: 'envMm',
      type: 'telco-messaging-environment',
      name: 'bench messaging (memory)',
      messagingServiceSid: '',
      autoDeploy: false,
      validateSignatures: true,
      publicBaseUrl,
      apiUrl: twilioApiUrl,
      sessionStore: MEMORY_STORE,
      maxSessions: 0,
      credentials: { accountSid: CREDS.accountSid, authToken: CREDS.authToken, webhookSigningSecret: '', token: CREDS.messagingMemoryToken },
    },
    { id: 'tMsgMem', type: 'tab', label: 'Messaging (memory store)' },
    { id: 'mm-start', type: 'telco-sms-start', z: 'tMsgMem', environment: 'envMm', variable: 'message', wires: w('mm-ask') },
    { id: 'mm-ask', type: 'input-task', z: 'tMsgMem', prompt: '', resultVariable: 'answer', filesVariable: '', timeout: 0, wires: [['mm-say'], []] },
    { id: 'mm-say', type: 'output-task', z: 'tMsgMem', text: 'You said {answer}', attachments: '', wires: [['mm-ask'], []] },

    voiceEnvironment('envV', 'bench voice', CREDS.voiceToken),
    { id: 'tVoice', type: 'tab', label: 'Voice' },
    { id: 'v-start', type: 'telco-call-start', z: 'tVoice', environment: 'envV', variable: 'call', wires: w('v-ask') },
    { id: 'v-ask', type: 'input-task', z: 'tVoice', prompt: 'Say something', resultVariable: 'answer', filesVariable: '', timeout: 0, wires: [['v-say'], []] },
    { id: 'v-say', type: 'output-task', z: 'tVoice', text: 'You said {answer}', attachments: '', wires: [['v-ask'], []] },

    // Call out at callsPerSecond 50: `POST /bench/callout` with `{ count, prefix }` becomes
    // `count` requests to call `<prefix><n>`, each placed through the fake API's Calls.json.
    voiceEnvironment('envCo', 'bench call out', CREDS.calloutToken, { callerId: '+15550009999', callsPerSecond: 50 }),
    { id: 'tCallout', type: 'tab', label: 'Call out' },
    { id: 'co-in', type: 'http in', z: 'tCallout', url: '/bench/callout', method: 'post', wires: [['co-ok', 'co-fan']] },
    { id: 'co-ok', type: 'http response', z: 'tCallout', statusCode: '200', wires: [] },
    {
      id: 'co-fan',
      type: 'function',
      z: 'tCallout',
      func: 'const { count, prefix } = msg.payload;\nconst out = [];\nfor (let i = 0; i < count; i++) out.push({ to: prefix + String(i).padStart(7, "0") });\nreturn [out];',
      outputs: 1,
      wires: w('co-id'),
    },
    // A function node gives every message it sends its input's _msgid, and Call out refuses a
    // message id it has seen (a redelivery): each request gets an id of its own.
    {
      id: 'co-id',
      type: 'change',
      z: 'tCallout',
      rules: [{ t: 'set', p: '_msgid', pt: 'msg', to: 'to', tot: 'msg' }],
      wires: w('co-out'),
    },
    {
      id: 'co-out',
      type: 'telco-call-out',
      z: 'tCallout',
      environment: 'envCo',
      variable: 'call',
      to: 'to',
      toType: 'msg',
      machineDetection: '',
      ringTimeout: 30,
      wires: [[], []],
    },

    // The AI agent answering each turn at once: output 3 straight to Agent say (an echo).
    voiceEnvironment('envA', 'bench agent', CREDS.agentToken),
    { id: 'tAgent', type: 'tab', label: 'AI agent' },
    { id: 'a-start', type: 'telco-call-start', z: 'tAgent', environment: 'envA', variable: 'call', wires: w('a-agent') },
    {
      id: 'a-agent',
      type: 'telco-voice-agent',
      z: 'tAgent',
      url: '',
      interruptible: 'any',
      dtmfDetection: true,
      parameters: [],
      resultVariable: 'agent',
      wires: [[], [], ['a-say']],
    },
    { id: 'a-say', type: 'telco-voice-agent-say', z: 'tAgent', wires: [[], []] },

    {
      id: 'envT',
      type: 'teamchat-environment',
      name: 'bench team chat',
      sessionMode: 'PerChannel',
      useThreads: false,
      startFromDirect: true,
      startFromMention: true,
      startFromChannel: false,
      defaultChannel: '',
      publicBaseUrl,
      apiUrl: slackApiUrl,
      sessionStore: '',
      maxSessions: 0,
      credentials: { botToken: CREDS.botToken, signingSecret: CREDS.signingSecret, token: CREDS.teamchatToken },
    },
    { id: 'tTeam', type: 'tab', label: 'Team chat' },
    { id: 't-start', type: 'teamchat-start', z: 'tTeam', environment: 'envT', variable: 'teamchat', wires: w('t-ask') },
    { id: 't-ask', type: 'input-task', z: 'tTeam', prompt: '', resultVariable: 'answer', filesVariable: '', timeout: 0, wires: [['t-say'], []] },
    { id: 't-say', type: 'output-task', z: 'tTeam', text: 'You said {answer}', attachments: '', wires: [['t-ask'], []] },

    ...handRolledFlow(publicBaseUrl, twilioApiUrl, CREDS),
  ];
}
