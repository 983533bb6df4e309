import { TaskError } from '../../model/errors';
import { resolvePlaceholders } from '../../model/placeholders';
import type { RED, RedNode } from '../../model/red';
import type { TeamChatBinding } from '../inbound';
import { TEAMCHAT_CHANNEL } from '../inbound';
import type { TeamChatModule } from '../teamchat-module';
import { runTask } from '../../kit/task-runner';
import { slackFailure } from '../slack-api';
import { runtimeText } from '../../model/texts';

export interface SetStatusConfig {
  status?: string;
  /** One per line, at most 10 (Slack rotates them under the status). */
  loadingMessages?: string;
}

/** Slack takes up to 10 loading messages. */
export const MAX_LOADING_MESSAGES = 10;

/**
 * Set status (Slack): "is thinking…" in the Session's thread while the flow works, with
 * `assistant.threads.setStatus`, kept up past Slack's 2-minute drop until the Session's next post
 * (see thread-status.ts). An empty status clears it. On another Channel it does nothing; in the
 * Test chat it is a typing line.
 */
export function setStatusTask(red: RED, teamchat: TeamChatModule, node: RedNode, config: SetStatusConfig): void {
  const { engine } = teamchat;
  node.on('input', (msg, send, done) => {
    runTask(engine, node, msg, send, done, async (session) => {
      const status = resolvePlaceholders(config.status ?? '', msg.vars).trim();
      const loading = String(config.loadingMessages ?? '')
        .split('\n')
        .map((line) => resolvePlaceholders(line, msg.vars).trim())
        .filter(Boolean);
      if (loading.length > MAX_LOADING_MESSAGES) throw new TaskError(3005, `Loading messages: at most ${MAX_LOADING_MESSAGES} lines, not ${loading.length}`);
      // The Test chat shows it, as Chat or as played Slack; a played call or SMS has none, as for real.
      if (session.isTest && (session.channel === TEAMCHAT_CHANNEL || session.channel === 'Chat')) {
        if (status)
          engine.addHistory(session, { from: 'bot', kind: 'status', text: status, ...(loading.length ? { detail: { loadingMessages: loading } } : {}) });
        return { next: 'output' };
      }
      // A phone call or an SMS has no thread status: the Process goes on as it would.
      if (session.channel !== TEAMCHAT_CHANNEL) return { next: 'output' };
      const binding = session.binding as Partial<TeamChatBinding>;
      const env = teamchat.environments.get(session.environment);
      if (!env || !binding.channel) throw new TaskError(4012, `Session ${session.id} is not bound to a team-chat conversation of a deployed Environment`);
      if (!binding.thread) throw new TaskError(3005, 'The Session has no thread to show a status in');
      try {
        await env.statuses.show({
          channel_id: binding.channel,
          thread_ts: binding.thread,
          status,
          ...(loading.length ? { loading_messages: loading } : {}),
        });
      } catch (err) {
        throw err instanceof TaskError ? err : slackFailure(err, 'assistant.threads.setStatus');
      }
      node.status(status ? { fill: 'blue', shape: 'dot', text: runtimeText(red, 'teamchat', 'runtime.status.statusShown') } : {});
      return { next: 'output' };
    });
  });
}
