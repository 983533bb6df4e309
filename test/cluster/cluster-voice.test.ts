import 'should';
import { node, tab } from '../harness/flows';
import { Hold } from '../harness/hold';
import { NodeRed, eventually } from '../harness/node-red';
import { RandomProxy } from '../harness/proxy';
import { RedisServer, redisContextSettings } from '../harness/redis';
import { FakeTwilioCall, type CallAnswer, type ParsedVerb } from '../fakes/twilio-voice-caller';
import { voiceEnvironment } from '../harness/voice-flows';

describe('a voice call whose rounds alternate between two instances sharing Redis', function () {
  this.timeout(120000);
  let redis: RedisServer;
  const reds: NodeRed[] = [];
  let proxy: RandomProxy;
  const hold = new Hold();
  let env: ReturnType<typeof voiceEnvironment>;

  before(async function () {
    await hold.start();
    redis = await RedisServer.start();
    proxy = new RandomProxy([]);
    await proxy.listen();
    env = voiceEnvironment('vshared', { sessionStore: 'shared', publicBaseUrl: proxy.url('').replace(/\/$/, '') });
    const flows = [
      env,
      tab('pv', 'Voice'),
      node('telco-call-start', 'vs', 'pv', { environment: 'vshared' }, [['hello']]),
      node('output-task', 'hello', 'pv', { text: 'Welcome.' }, [['name'], []]),
      node('input-task', 'name', 'pv', { prompt: 'Your name?', resultVariable: 'name' }, [['wait'], []]),
      node('http request', 'wait', 'pv', { method: 'GET', ret: 'txt', url: `http://127.0.0.1:${hold.port}/slow`, paytoqs: 'ignore' }, [['thanks']]),
      node('output-task', 'thanks', 'pv', { text: 'Thanks {name}.' }, [['more'], []]),
      node('input-task', 'more', 'pv', { prompt: 'Anything else?', resultVariable: 'more' }, [['bye'], []]),
      node('output-task', 'bye', 'pv', { text: 'Goodbye, {more}.' }, [['end'], []]),
      node('end-task', 'end', 'pv', {}),
    ];
    for (let i = 0; i < 2; i++) {
      const red = await NodeRed.start({
        settings: { channelSessions: { voiceResponseTimeout: 0.5, sweepInterval: 0.2 } },
        settingsCode: redisContextSettings(redis.url),
      });
      reds.push(red);
      await red.deploy(flows);
    }
    proxy.setBackends(reds.map((red, i) => ({ name: 'ab'[i], port: red.port })));
    // Every request goes to the other instance than the one before.
    let turn = 0;
    proxy.chooseWith(() => (turn++ % 2 ? 0.99 : 0));
  });
  after(async function () {
    await proxy?.close();
    for (const red of reds) await red.close();
    await redis?.close();
    await hold.close();
  });

  const isHolding = (v: ParsedVerb) => v.verb === 'Pause' || v.verb === 'Redirect';
  const said = (answers: CallAnswer[]) => answers.flatMap((a) => a.verbs.filter((v) => !isHolding(v))).map((v) => [v.verb, v.text]);

  it('answers each round with the right TwiML, and the redirect of a slow step on the other instance says the rest once', async function () {
    const call = new FakeTwilioCall({ url: (p: string) => proxy.url(p) } as unknown as NodeRed, { publicBaseUrl: proxy.url('') });
    const first = await call.start(env.token);
    first.status.should.equal(200, first.text);
    said([first]).should.eql([
      ['Say', 'Welcome.'],
      ['Gather', 'Your name?'],
    ]);

    // The answer runs into the slow step: Pause + Redirect, and the redirect lands on the other instance.
    const slow = await call.follow(first.verbs.at(-1)!.attrs.action, { SpeechResult: 'Ada', Confidence: '0.9' });
    slow.status.should.equal(200, slow.text);
    slow.verbs.at(-1)!.verb.should.equal('Redirect');
    await eventually(() => hold.calls === 1, 10000, 'the flow to reach the slow step');
    const answers: CallAnswer[] = [first, slow];
    const held = await call.follow(slow.verbs.at(-1)!.text);
    answers.push(held);
    hold.release();
    while (answers.at(-1)!.verbs.at(-1)?.verb === 'Redirect') answers.push(await call.follow(answers.at(-1)!.verbs.at(-1)!.text));
    said(answers).should.eql([
      ['Say', 'Welcome.'],
      ['Gather', 'Your name?'],
      ['Say', 'Thanks Ada.'],
      ['Gather', 'Anything else?'],
    ]);
    hold.calls.should.equal(1, 'the slow step ran once');
    new Set(proxy.served.slice(-answers.length)).size.should.equal(2, 'both instances answered rounds of the call');

    const last = await call.follow(answers.at(-1)!.verbs.at(-1)!.attrs.action, { SpeechResult: 'no thanks' });
    last.verbs
      .map((v) => [v.verb, v.text])
      .should.eql([
        ['Say', 'Goodbye, no thanks.'],
        ['Hangup', ''],
      ]);
  });

  it('a call survives the death of the instance that answered its previous round', async function () {
    const call = new FakeTwilioCall({ url: (p: string) => proxy.url(p) } as unknown as NodeRed, { publicBaseUrl: proxy.url('') });
    const first = await call.start(env.token);
    said([first]).should.eql([
      ['Say', 'Welcome.'],
      ['Gather', 'Your name?'],
    ]);
    const answered = proxy.served.at(-1)!;
    const victim = reds['ab'.indexOf(answered)];
    await victim.kill();
    try {
      hold.release();
      const next = await call.follow(first.verbs.at(-1)!.attrs.action, { SpeechResult: 'Bo' });
      const answers = [next];
      await eventually(() => hold.calls >= 2, 10000, 'the slow step');
      hold.release();
      while (answers.at(-1)!.verbs.at(-1)?.verb === 'Redirect') answers.push(await call.follow(answers.at(-1)!.verbs.at(-1)!.text));
      said(answers).should.eql([
        ['Say', 'Thanks Bo.'],
        ['Gather', 'Anything else?'],
      ]);
    } finally {
      await victim.restart();
    }
  });
});
