import { node, type FlowNode } from '../harness/flows';
import type { FakeSlack } from './slack-api';

export const SIGNING_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';

/** A `teamchat-environment` as the editor deploys it, pointed at the fake Slack API, credentials inline. */
export function teamchatEnvironment(id: string, token: string, fake: FakeSlack, props: Record<string, unknown> = {}, credentials: Record<string, string> = {}): FlowNode {
  return {
    id, type: 'teamchat-environment', name: `Env ${id}`,
    sessionMode: 'PerThread', useThreads: true, startFromDirect: true, startFromMention: true, startFromChannel: false,
    defaultChannel: '', publicBaseUrl: '', apiUrl: fake.apiUrl, sessionStore: '', maxSessions: 0,
    ...props,
    credentials: { botToken: fake.botToken, signingSecret: SIGNING_SECRET, token, ...credentials },
  };
}

/** start -> Output (greeting) -> Input {answer} -> Output -> End, on tab z. */
export function helpDesk(z: string, envId: string, ids: { start: string; hello: string; ask: string; reply: string; end: string }, props: {
  hello?: string; prompt?: string; reply?: string; filesVariable?: string; attachments?: string;
} = {}): FlowNode[] {
  return [
    node('teamchat-start', ids.start, z, { environment: envId, variable: 'teamchat', testData: {} }, [[ids.hello]]),
    node('output-task', ids.hello, z, { text: props.hello ?? 'Hello {teamchat.profileName}: {teamchat.text}', attachments: props.attachments ?? '' }, [[ids.ask], []]),
    node('input-task', ids.ask, z, { prompt: props.prompt ?? 'What else?', resultVariable: 'answer', filesVariable: props.filesVariable ?? '' }, [[ids.reply], []]),
    node('output-task', ids.reply, z, { text: props.reply ?? 'Got {answer}' }, [[ids.end], []]),
    node('end-task', ids.end, z, {}),
  ];
}
