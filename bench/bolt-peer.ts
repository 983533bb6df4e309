import { App } from '@slack/bolt';

/**
 * Slack Bolt's own HTTP receiver, the peer the team-chat acks are compared with. With a Slack API
 * URL as third argument it also does the job our team-chat Process does: it answers each direct
 * message with "You said …" through Bolt's `say` (its WebClient), after acknowledging it.
 */
async function main(): Promise<void> {
  const [port, signingSecret, slackApiUrl] = process.argv.slice(2);
  const app = new App({
    signingSecret,
    // A fixed authorization: no auth.test call to Slack at start or per event.
    authorize: async () => ({ botToken: 'xoxb-bench_not_real', botId: 'BBOLT', botUserId: 'UBOLT', teamId: 'TBENCH' }),
    ...(slackApiUrl ? { clientOptions: { slackApiUrl } } : {}),
    logLevel: 'error' as never,
  });
  if (slackApiUrl) {
    app.message(async ({ message, say }) => {
      await say(`You said ${'text' in message ? message.text : ''}`);
    });
  } else {
    app.event('message', async () => undefined);
  }
  await app.start(Number(port));
  process.stdout.write('READY\n');
}

main().catch((err) => {
  process.stderr.write(String(err));
  process.exit(1);
});
