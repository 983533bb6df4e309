import { TaskError } from '../../model/errors';
import type { RED, RedNode } from '../../model/red';
import type { SessionRecord, TokenMessage } from '../../model/session';
import { runTask } from '../../kit/task-runner';
import { runtimeText } from '../../model/texts';
import { TEST_CHANNEL } from '../../model/channels';
import { conversationOf } from '../behaviour';
import { TEAMCHAT_CHANNEL, type TeamChatBinding } from '../inbound';
import { rememberPost } from '../posted';
import { slackFailure } from '../slack-api';
import type { TeamChatModule } from '../teamchat-module';
import type { Gathering } from '../stream/gatherings';
import { SlackAnswer } from '../stream/slack-answer';

export interface StreamReplyConfig {
  feedback?: boolean | string;
}

/** Where the answer's text waits for the Channel's own output, as `{$streamAnswer}` (a name no Session variable can take from a person). */
const ANSWER_VARIABLE = '$streamAnswer';

/**
 * Stream reply: every message that reaches it for one Session adds `msg.payload` to one answer;
 * `msg.partial === true` means more follows, the first without it finishes the answer, and only
 * that one goes on (output 1) with the whole text and `msg.stream`. In Slack the answer streams
 * into the Session's conversation as it comes (slack-answer.ts); on another Channel, and in the
 * Test chat, it is said once at the end, as an OutputTask says its text.
 */
export function streamReplyTask(red: RED, teamchat: TeamChatModule, node: RedNode, config: StreamReplyConfig): void {
  const { engine, gatherings } = teamchat;
  const feedback = config.feedback === true || config.feedback === 'true';
  node.on('close', (removed, done) => {
    gatherings.nodeClosed(node.id, removed === true);
    done();
  });
  node.on('input', (msg, send, done) => {
    const session = engine.sessionOf(msg);
    if (msg.partial === true && session) {
      // A part: added in order behind the parts before it; the token goes no further.
      const gathering = gatherings.get(session, node.id);
      take(gathering, msg);
      // In the Test chat the answer grows in one bubble, as it would in Slack.
      if (growsInChat(session) && !gathering.failure) engine.draft(session, gathering.text);
      gathering.chain = gathering.chain.then(() => sendUnsent(teamchat, session, gathering).catch((err: unknown) => void (gathering.failure ??= err as Error)));
      void gathering.chain.then(() => done());
      return;
    }
    runTask(engine, node, msg, send, done, async (live) => {
      const gathering = gatherings.get(live, node.id);
      take(gathering, msg);
      gathering.finishing = true;
      gathering.slack?.finishing();
      try {
        const finished = gathering.chain.then(async () => {
          if (gathering.failure) {
            await gathering.slack?.abandon();
            throw gathering.failure;
          }
          await finish(red, teamchat, live, gathering, msg, node, feedback);
        });
        gathering.chain = finished.catch(() => undefined);
        await finished;
      } catch (err) {
        throw err instanceof TaskError ? err : slackFailure(err, 'Stream reply');
      } finally {
        gatherings.finished(live, node.id);
      }
      return { next: 'output' };
    });
  });
}

/** A message's text joins the answer as it arrives (a part that is not text fails the answer, at its end). */
function take(gathering: Gathering, msg: TokenMessage): void {
  try {
    const text = partText(msg.payload);
    gathering.text += text;
    gathering.unsent += text;
  } catch (err) {
    gathering.failure ??= err as Error;
  }
}

/**
 * Sends Slack what it has not had yet, in one call: the parts that came while the call before
 * waited for its turn (the pace all answers of the app share) go out together, so an answer
 * written faster than the pace takes fewer, larger appends. Kept for the end elsewhere.
 */
async function sendUnsent(teamchat: TeamChatModule, session: SessionRecord, gathering: Gathering): Promise<void> {
  // The last part has come: the rest ends the answer with its stop.
  if (gathering.finishing) return;
  const text = gathering.unsent;
  gathering.unsent = '';
  if (!text || !inSlack(session) || gathering.failure) return;
  if (!gathering.slack) [gathering.slack, gathering.environment] = await slackAnswerOf(teamchat, session);
  await gathering.slack.add(text);
}

function partText(payload: unknown): string {
  if (payload === undefined || payload === null) return '';
  if (typeof payload === 'string') return payload;
  if (typeof payload === 'number' || typeof payload === 'boolean') return String(payload);
  throw new TaskError(3005, 'msg.payload must be the text of the answer (a string)');
}

function inSlack(session: SessionRecord): boolean {
  return session.channel === TEAMCHAT_CHANNEL && !session.isTest;
}

/** A test Session on the Chat Channel, or playing Slack: the Test chat shows the answer as Slack would (growing, with its feedback buttons). */
function growsInChat(session: SessionRecord): boolean {
  return session.isTest && (session.channel === TEST_CHANNEL || session.channel === TEAMCHAT_CHANNEL);
}

/** The answer's Slack side, and the Environment it goes through. */
async function slackAnswerOf(teamchat: TeamChatModule, session: SessionRecord): Promise<[SlackAnswer, string]> {
  const conversation = conversationOf(teamchat.environments, session);
  const { env, target } = conversation;
  const binding = session.binding as Partial<TeamChatBinding>;
  // A Session started by the start endpoint with threads on has no thread yet: the answer opens none (it goes in the channel).
  const answer = new SlackAnswer(
    {
      client: () => env.client(),
      postMessage: (args) => env.postMessage(args),
      pacer: teamchat.pacers.of(await env.appKey()),
      noStreaming: env.noStreaming,
      posted: (channel, threadTs) => env.statuses.posted(channel, threadTs),
      agentSession: {
        set: (status) => env.agent.setStatus(target.channel, target.threadTs, status, binding.user),
        isAgent: () => env.agent.isAgent,
      },
      effect: teamchat.engine.effectFor(session),
    },
    {
      channel: target.channel,
      ...(target.threadTs ? { threadTs: target.threadTs } : {}),
      ...(binding.user ? { recipientUserId: binding.user } : {}),
      ...(binding.team ? { recipientTeamId: binding.team } : {}),
    },
  );
  return [answer, env.id];
}

/** The last part came: the answer is ended where it is, recorded once, and the token goes on with it. */
async function finish(
  red: RED,
  teamchat: TeamChatModule,
  session: SessionRecord,
  gathering: Gathering,
  msg: TokenMessage,
  node: RedNode,
  feedback: boolean,
): Promise<void> {
  const { engine } = teamchat;
  if (!gathering.text.trim()) throw new TaskError(3005, 'The answer is empty: msg.payload had no text in any part');
  let stream: Record<string, unknown>;
  if (inSlack(session)) {
    const slack = gathering.slack ?? (await slackAnswerOf(teamchat, session))[0];
    // What came since the last append ends the answer with its stop.
    const rest = gathering.unsent;
    gathering.unsent = '';
    await slack.finish(feedback ? [feedbackBlock(red)] : undefined, rest, gathering.text);
    // Its feedback buttons answer this Session's InputTask (answer-click.ts).
    for (const m of slack.messages) rememberPost(session, m.channel, m.ts);
    const last = slack.messages[slack.messages.length - 1];
    stream = { ts: last?.ts ?? '', channel: last?.channel ?? '', messages: slack.messages.length, fallback: slack.fallback, stopped: slack.stopped };
    node.status({ fill: 'green', shape: 'dot', text: runtimeText(red, 'teamchat', 'runtime.status.streamed', { count: slack.messages.length }) });
  } else {
    // As an OutputTask would say it: the Channel's own output (an SMS, a spoken line, the Test chat's bubble).
    const vars = { ...(msg.vars ?? {}), [ANSWER_VARIABLE]: gathering.text };
    await engine.behaviourOf(session).output(engine.taskContext(session, { ...msg, vars }, node), `{${ANSWER_VARIABLE}}`, '');
    stream = { ts: '', channel: '', messages: 1, fallback: false, stopped: false };
    node.status({});
  }
  // The Test chat draws the feedback buttons under the answer; a click answers the InputTask as in Slack.
  const buttons = feedback && growsInChat(session) ? { detail: { feedback: feedbackButtons(red) } } : {};
  engine.addHistory(session, { from: 'bot', kind: 'message', text: gathering.text, ...buttons });
  msg.payload = gathering.text;
  msg.stream = stream;
  delete msg.partial;
}

/** Slack's feedback buttons under the finished answer; a click's value is `positive` or `negative`. */
function feedbackBlock(red: RED): Record<string, unknown> {
  return { type: 'context_actions', elements: [feedbackButtons(red)] };
}

function feedbackButtons(red: RED): Record<string, unknown> {
  const label = (key: string) => ({ type: 'plain_text', text: runtimeText(red, 'teamchat', `runtime.feedback.${key}`) });
  return {
    type: 'feedback_buttons',
    action_id: 'feedback',
    positive_button: { text: label('positive'), value: 'positive', accessibility_label: label('positiveLabel').text },
    negative_button: { text: label('negative'), value: 'negative', accessibility_label: label('negativeLabel').text },
  };
}
