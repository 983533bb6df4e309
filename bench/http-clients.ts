import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { WebClient } from '@slack/web-api';
import twilio from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient';
import { createMessage } from '../src/messaging/provider-client';
import type { MessagingEnvironment } from '../src/messaging/environment';
import { postMessageCaller } from '../src/teamchat/post-message';
import { slackWebApiFetch } from '../src/teamchat/slack-fetch';
import { TwilioHttpClient } from '../src/telco/twilio-http-client';
import { bodyText, request } from '../src/http/http-request';

/**
 * `npm run bench -- --clients`: the CPU one reply costs in this process, through each provider
 * client with its default transport, with ours, and by the path the package's replies take
 * (createMessage, postMessageCaller: our transport without the SDK's resource layers). The fake
 * APIs run in another process, so only the client's side is counted.
 */
const CALLS = 5000;
const WARM = 1000;
const CONCURRENCY = 16;
const ACCOUNT = 'AC' + '0'.repeat(32);

/** twilio's own transport (axios), sent to the fake API: the client before this package changed it. */
class AxiosToFake extends twilio.RequestClient {
  constructor(private readonly base: string) {
    super({ timeout: 30000 });
  }

  override request<TData>(opts: RequestClient.RequestOptions<TData>) {
    const target = new URL(opts.uri);
    return super.request<TData>({ ...opts, uri: `${this.base}${target.pathname}${target.search}` });
  }
}

async function cpuPerCall(call: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const run = async (count: number) => {
    next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) await call(next++);
      }),
    );
  };
  await run(WARM);
  const before = process.cpuUsage();
  await run(CALLS);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, [join(__dirname, 'fake-apis-process.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) =>
    child.stdout?.on('data', (d: Buffer) => {
      const m = /PORT (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  try {
    const sms = (client: twilio.Twilio) => (i: number) => client.messages.create({ from: '+15550000000', to: `+1555${i}`, body: 'You said hi' });
    const post = (client: WebClient) => (i: number) => client.chat.postMessage({ channel: `D${i}`, text: 'You said hi' });
    const messagingEnvironment = {
      id: 'bench',
      node: {},
      config: { apiUrl: base },
      credentials: { accountSid: ACCOUNT, authToken: 'token' },
    } as unknown as MessagingEnvironment;
    const postMessage = postMessageCaller('xoxb-bench', `${base}/api/`, () => undefined);
    const rows = [
      {
        client: 'node:http alone (one keep-alive POST of the same form, its answer read)',
        us: await cpuPerCall(async (i) => {
          const answer = await request(`${base}/2010-04-01/Accounts/${ACCOUNT}/Messages.json`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: 'Basic QUM6dG9rZW4=' },
            body: new URLSearchParams({ To: `+1555${i}`, From: '+15550000000', Body: 'You said hi' }).toString(),
            headersTimeout: 30000,
            bodyTimeout: 30000,
          });
          return JSON.parse(await bodyText(answer.body)) as unknown;
        }),
      },
      { client: 'twilio, default transport (axios)', us: await cpuPerCall(sms(twilio(ACCOUNT, 'token', { httpClient: new AxiosToFake(base) }))) },
      {
        client: 'twilio, TwilioHttpClient (node:http)',
        us: await cpuPerCall(sms(twilio(ACCOUNT, 'token', { httpClient: new TwilioHttpClient(base, 30000) }))),
      },
      {
        client: 'createMessage (the replies: TwilioHttpClient without the Messages resource)',
        us: await cpuPerCall((i) => createMessage(messagingEnvironment, { from: '+15550000000', to: `+1555${i}`, body: 'You said hi' })),
      },
      { client: '@slack/web-api, default fetch', us: await cpuPerCall(post(new WebClient('xoxb-bench', { slackApiUrl: `${base}/api/` }))) },
      {
        client: '@slack/web-api, slackWebApiFetch (node:http)',
        us: await cpuPerCall(
          post(
            new WebClient('xoxb-bench', {
              slackApiUrl: `${base}/api/`,
              fetch: slackWebApiFetch(`${base}/api/`),
              retryConfig: { retries: 0 },
              rejectRateLimitedCalls: true,
            }),
          ),
        ),
      },
      {
        client: 'postMessageCaller (the replies: slackWebApiFetch without the WebClient)',
        us: await cpuPerCall((i) => postMessage({ channel: `D${i}`, text: 'You said hi' })),
      },
    ];
    console.table(rows.map((r) => ({ client: r.client, 'CPU µs per reply': Math.round(r.us) })));
  } finally {
    child.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
