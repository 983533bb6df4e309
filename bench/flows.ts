/** The flows under benchmark: a bare Node-RED baseline and one Process per channel. */
export const CREDS = {
  signingSecret: 'bench-signing-secret',
  botToken: 'xoxb-bench_not_real',
  accountSid: 'AC' + '0'.repeat(32),
  authToken: 'bench-auth-token',
  teamchatToken: 'benchTeamchatToken0000001',
  voiceToken: 'benchVoiceToken00000000001',
  messagingToken: 'benchMessagingToken000001',
};

export function benchFlows(publicBaseUrl: string, slackApiUrl: string, twilioApiUrl: string): object[] {
  const w = (id: string) => [[id]];
  return [
    { id: 'tBase', type: 'tab', label: 'Baseline' },
    { id: 'base-in', type: 'http in', z: 'tBase', url: '/bench/baseline', method: 'post', wires: w('base-out') },
    { id: 'base-out', type: 'http response', z: 'tBase', statusCode: '200', wires: [] },

    {
      id: 'envM', type: 'telco-messaging-environment', name: 'bench messaging', messagingServiceSid: '', autoDeploy: false,
      validateSignatures: true, publicBaseUrl, apiUrl: twilioApiUrl, sessionStore: '', maxSessions: 0,
      credentials: { accountSid: CREDS.accountSid, authToken: CREDS.authToken, webhookSigningSecret: '', token: CREDS.messagingToken },
    },
    { id: 'tMsg', type: 'tab', label: 'Messaging' },
    { id: 'm-start', type: 'telco-sms-start', z: 'tMsg', environment: 'envM', variable: 'message', wires: w('m-ask') },
    { id: 'm-ask', type: 'input-task', z: 'tMsg', prompt: '', resultVariable: 'answer', filesVariable: '', timeout: 0, wires: [['m-say'], []] },
    { id: 'm-say', type: 'output-task', z: 'tMsg', text: 'You said {answer}', attachments: '', wires: [['m-ask'], []] },

    {
      id: 'envV', type: 'telco-voice-environment', name: 'bench voice', phoneNumberSid: '', defaultVoice: '', defaultLanguage: '',
      speechModel: '', autoDeploy: false, validateSignatures: true, publicBaseUrl, apiUrl: twilioApiUrl, sessionStore: '', maxSessions: 0,
      credentials: { accountSid: CREDS.accountSid, authToken: CREDS.authToken, webhookSigningSecret: '', token: CREDS.voiceToken },
    },
    { id: 'tVoice', type: 'tab', label: 'Voice' },
    { id: 'v-start', type: 'telco-call-start', z: 'tVoice', environment: 'envV', variable: 'call', wires: w('v-ask') },
    { id: 'v-ask', type: 'input-task', z: 'tVoice', prompt: 'Say something', resultVariable: 'answer', filesVariable: '', timeout: 0, wires: [['v-say'], []] },
    { id: 'v-say', type: 'output-task', z: 'tVoice', text: 'You said {answer}', attachments: '', wires: [['v-ask'], []] },

    {
      id: 'envT', type: 'teamchat-environment', name: 'bench team chat', sessionMode: 'PerChannel', useThreads: false,
      startFromDirect: true, startFromMention: true, startFromChannel: false, defaultChannel: '', publicBaseUrl, apiUrl: slackApiUrl,
      sessionStore: '', maxSessions: 0,
      credentials: { botToken: CREDS.botToken, signingSecret: CREDS.signingSecret, token: CREDS.teamchatToken },
    },
    { id: 'tTeam', type: 'tab', label: 'Team chat' },
    { id: 't-start', type: 'teamchat-start', z: 'tTeam', environment: 'envT', variable: 'teamchat', wires: w('t-ask') },
    { id: 't-ask', type: 'input-task', z: 'tTeam', prompt: '', resultVariable: 'answer', filesVariable: '', timeout: 0, wires: [['t-say'], []] },
    { id: 't-say', type: 'output-task', z: 'tTeam', text: 'You said {answer}', attachments: '', wires: [['t-ask'], []] },
  ];
}
