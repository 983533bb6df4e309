import { App } from '@slack/bolt';

/** Slack Bolt's own HTTP receiver acknowledging events, the peer the team-chat acks are compared with. */
async function main(): Promise<void> {
  const port = Number(process.argv[2]);
  const app = new App({
    signingSecret: process.argv[3],
    // A fixed authorization: no auth.test call to Slack at start or per event.
    authorize: async () => ({ botToken: 'xoxb-bench_not_real', botId: 'BBOLT', botUserId: 'UBOLT', teamId: 'TBENCH' }),
    logLevel: 'error' as never,
  });
  app.event('message', async () => undefined);
  await app.start(port);
  process.stdout.write('READY\n');
}

main().catch((err) => {
  process.stderr.write(String(err));
  process.exit(1);
});
