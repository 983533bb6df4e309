import { node, type FlowNode } from '../harness/flows';
import type { FakeSlack } from './slack-api';

/** Obviously fake (never a real Slack app's signing secret). */
export const SIGNING_SECRET = 'fake-slack-signing-secret-for-tests';

/** A `teamchat-environment` as the editor deploys it, pointed at the fake Slack API, credentials inline. */
export function teamchatEnvironment(
  id: string,
  token: string,
  fake: FakeSlack,
  props: Record<string, unknown> = {},
  credentials: Record<string, string> = {},
): FlowNode {
  return {
    id,
    type: 'teamchat-environment',
    name: `Env ${id}`,
    sessionMode: 'PerThread',
    useThreads: true,
    startFromDirect: true,
    startFromMention: true,
    startFromChannel: false,
    defaultChannel: '',
    publicBaseUrl: '',
    apiUrl: fake.apiUrl,
    sessionStore: '',
    maxSessions: 0,
    ...props,
    credentials: { botToken: fake.botToken, signingSecret: SIGNING_SECRET, token, ...credentials },
  };
}

/** start -> Output (greeting) -> Input {answer} -> Output -> End, on tab z. */
export function helpDesk(
  z: string,
  envId: string,
  ids: { start: string; hello: string; ask: string; reply: string; end: string },
  props: {
    hello?: string;
    prompt?: string;
    reply?: string;
    filesVariable?: string;
    attachments?: string;
  } = {},
): FlowNode[] {
  return [
    node('teamchat-start', ids.start, z, { environment: envId, variable: 'teamchat', testData: {} }, [[ids.hello]]),
    node('output-task', ids.hello, z, { text: props.hello ?? 'Hello {teamchat.profileName}: {teamchat.text}', attachments: props.attachments ?? '' }, [
      [ids.ask],
      [],
    ]),
    node('input-task', ids.ask, z, { prompt: props.prompt ?? 'What else?', resultVariable: 'answer', filesVariable: props.filesVariable ?? '' }, [
      [ids.reply],
      [],
    ]),
    node('output-task', ids.reply, z, { text: props.reply ?? 'Got {answer}' }, [[ids.end], []]),
    node('end-task', ids.end, z, {}),
  ];
}

/** Blocks with buttons and a static select, as in the help-desk example. */
export const APPROVAL_BLOCKS = JSON.stringify([
  { type: 'section', text: { type: 'mrkdwn', text: 'Approve the request of {teamchat.from}?' } },
  {
    type: 'actions',
    block_id: 'decide',
    elements: [
      { type: 'button', action_id: 'approve', text: { type: 'plain_text', text: 'Approve' }, value: 'yes', style: 'primary' },
      { type: 'button', action_id: 'reject', text: { type: 'plain_text', text: 'Reject' }, value: 'no', style: 'danger' },
      {
        type: 'static_select',
        action_id: 'priority',
        placeholder: { type: 'plain_text', text: 'Priority' },
        options: [
          { text: { type: 'plain_text', text: 'High' }, value: 'high' },
          { text: { type: 'plain_text', text: 'Low' }, value: 'low' },
        ],
      },
    ],
  },
]);

/**
 * start -> Block message (buttons) -> Input {decision} with an empty prompt -> Output -> End, on
 * tab z. With `loop` the Output goes back to the Input, so the Session waits again after each answer;
 * with `channel` the buttons are posted there rather than in the conversation.
 */
export function approvalDesk(
  z: string,
  envId: string,
  ids: { start: string; blocks: string; ask: string; reply: string; end: string },
  options: { loop?: boolean; channel?: string } = {},
): FlowNode[] {
  return [
    node('teamchat-start', ids.start, z, { environment: envId, variable: 'teamchat', testData: {} }, [[ids.blocks]]),
    node(
      'teamchat-block-message',
      ids.blocks,
      z,
      { environment: envId, channel: options.channel ?? '', channelType: 'str', notificationText: 'Approve the request?', blocks: APPROVAL_BLOCKS },
      [[ids.ask], []],
    ),
    node('input-task', ids.ask, z, { prompt: '', resultVariable: 'decision', filesVariable: '' }, [[ids.reply], []]),
    node(
      'output-task',
      ids.reply,
      z,
      {
        text: 'You chose {decision} ({decision_action.text} via {decision_action.action_id} in {decision_action.block_id}, by {decision_action.user})',
        attachments: '',
      },
      [[options.loop ? ids.ask : ids.end], []],
    ),
    node('end-task', ids.end, z, {}),
  ];
}
