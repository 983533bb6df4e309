import should from 'should';
import { node, tab } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { RedisServer, redisContextSettings } from '../harness/redis';
import { FakeTwilioApi } from '../fakes/twilio-api';
import { requestCall, requestEntry } from '../harness/call-out-flows';
import { voiceEnvironment } from '../harness/voice-flows';

const CALLER_ID = '+14155550100';

/** Two instances sharing a Redis Session store place one queue of calls: each once, in order, paced across both. */
describe('voice: Call out with two instances on Redis', function () {
  this.timeout(120000);
  let redis: RedisServer;
  let api: FakeTwilioApi;
  const reds: NodeRed[] = [];

  before(async function () {
    redis = await RedisServer.start();
    api = await FakeTwilioApi.start();
    for (let i = 0; i < 2; i++) {
      const red = await NodeRed.start({ settings: { channelSessions: { sweepInterval: 0.2 } }, settingsCode: redisContextSettings(redis.url) });
      reds.push(red);
    }
    // Both name the first instance as the public URL: the answered calls come back there.
    const flows = [
      voiceEnvironment('vcluster', {
        sessionStore: 'shared',
        publicBaseUrl: reds[0].url('').replace(/\/$/, ''),
        apiUrl: api.url,
        callerId: CALLER_ID,
        callsPerSecond: 10,
      }),
      tab('pc', 'Reminders'),
      ...requestEntry('pc', 'rc', '/call-shared', 'coShared'),
      node('telco-call-out', 'coShared', 'pc', { environment: 'vcluster', to: 'to', toType: 'msg' }, [[], []]),
    ];
    for (const red of reds) await red.deploy(flows);
  });
  after(async function () {
    for (const red of reds) await red.close();
    await api?.close();
    await redis?.close();
  });

  it('requests taken by both instances are each placed once, paced by one pace across the cluster', async function () {
    const people = Array.from({ length: 30 }, (_, i) => `+141555506${String(i).padStart(2, '0')}`);
    // Alternate instances, several at a time, so both record and both place.
    await Promise.all(
      [0, 1].map(async (k) => {
        for (let i = k; i < people.length; i += 2) await requestCall(reds[k], '/call-shared', { to: people[i], vars: {} });
      }),
    );
    await eventually(() => people.every((to) => api.calls.some((c) => c.form.To === to)) || undefined, 20000, 'every call placed');
    await new Promise((r) => setTimeout(r, 1500));
    for (const to of people) should(api.calls.filter((c) => c.form.To === to)).have.length(1, `calls to ${to}`);
    should(api.calls).have.length(people.length);
    const times = api.calls.map((c) => c.at).sort((a, b) => a - b);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    // 10 per second: slots 100 ms apart, whichever instance placed them; in any second at most
    // 10 (+1 for a request that reached the fake late in its slot).
    should(times.at(-1)! - times[0]).be.aboveOrEqual(29 * 100 - 50, `gaps ${gaps.join(', ')}`);
    for (let i = 0; i + 11 < times.length; i++) should(times[i + 11] - times[i]).be.aboveOrEqual(1000, `gaps ${gaps.join(', ')}`);
  });
});
