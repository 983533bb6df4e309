import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';

// The built package, as Node-RED loads it.
const { engineFor } = require('../../../dist/engine/engine.js');
const { voiceModuleFor } = require('../../../dist/voice/voice-module.js');
const { teamchatModuleFor } = require('../../../dist/teamchat/teamchat-module.js');
const { messagingModuleFor } = require('../../../dist/messaging/messaging-module.js');

type Engine = import('../../src/engine/engine').Engine;
type VoiceModule = import('../../src/voice/voice-module').VoiceModule;
type TeamChatModule = import('../../src/teamchat/teamchat-module').TeamChatModule;
type MessagingModule = import('../../src/messaging/messaging-module').MessagingModule;

/** One runtime's parts as Node-RED hands them to a node set: its event bus, hooks, settings, log. */
function fakeRuntime(userDir: string) {
  const hooks = new Map<string, unknown>();
  return {
    events: new EventEmitter(),
    hooks: { add: (name: string, fn: unknown) => hooks.set(name, fn), remove: (name: string) => hooks.delete(name), installed: hooks },
    settings: { userDir, channelSessions: { fileStorage: 'inline', sweepInterval: 60 } },
    util: { generateId: () => Math.random().toString(16).slice(2) },
    log: { info() {}, warn() {}, error() {}, debug() {} },
    nodes: { eachNode() {}, registerType() {}, createNode() {}, getNode() {} },
    _: (key: string) => key,
  };
}

/** What Node-RED does for each node set: a RED object of its own over the same runtime. */
function nodeSetRed(runtime: ReturnType<typeof fakeRuntime>) {
  return { ...runtime, settings: { ...runtime.settings } };
}

const fakeNode = (id: string): any => ({
  id,
  type: 'input-task',
  z: 'tab',
  wires: [],
  context: () => ({}),
  status() {},
  send() {},
  on() {},
  error() {},
  warn() {},
  log() {},
  debug() {},
});

const voiceEnvironment = (id: string, token: string) => ({
  id,
  name: id,
  node: fakeNode(id),
  credentials: { accountSid: 'AC1', authToken: 'secret', webhookSigningSecret: '', token },
});

/**
 * The engine and each module keep their state per Node-RED runtime: two runtimes in one process
 * (fake RED objects, as a test or an embedding application makes them) share nothing, while the
 * node sets of one runtime, each with its own RED object, share one engine and one module state.
 */
describe('state per runtime', function () {
  const dirs: string[] = [];
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'cs-runtime-'));
    dirs.push(dir);
    return dir;
  };
  after(function () {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('gives each runtime its own engine, and every node set of one runtime the same', function () {
    const one = fakeRuntime(newDir());
    const two = fakeRuntime(newDir());
    const a: Engine = engineFor(nodeSetRed(one));
    const b: Engine = engineFor(nodeSetRed(two));
    should(a === b).be.false();
    should(engineFor(nodeSetRed(one))).equal(a, 'another node set of the same runtime');
    // Each engine follows its own runtime's tokens, through its own hooks.
    should([...one.hooks.installed.keys()].sort()).eql([
      'onComplete.channelSessions',
      'onReceive.channelSessions',
      'preDeliver.channelSessions',
      'preRoute.channelSessions',
    ]);
    should(two.hooks.installed.size).equal(4);
  });

  it('keeps what modules and nodes plug in apart: Channels, starts, Environments and their stores', function () {
    const a: Engine = engineFor(nodeSetRed(fakeRuntime(newDir())));
    const b: Engine = engineFor(nodeSetRed(fakeRuntime(newDir())));
    a.registerChannel('loop', { channel: 'Chat', output: async () => ({ text: '' }), prompt: async () => ({ text: '' }), end: async () => {} });
    should(a.behaviourFor('Chat').channel).equal('Chat');
    should(() => b.behaviourFor('Chat')).throw(/No module handles the Chat Channel/);

    a.registerStart({ node: fakeNode('start1'), kind: { type: 'session-start', channel: null }, variable: '', testData: {} });
    should(a.allStarts().map((s) => s.node.id)).eql(['start1']);
    should(b.allStarts()).eql([]);

    const context = { get: () => undefined, set: () => undefined, keys: () => [] };
    a.attachEnvironment({ id: 'env1', name: 'Runtime A', moduleKey: 'loop', sessionStore: 'memory', maxSessions: 0, context });
    should(a.environmentName('env1')).equal('Runtime A');
    should(b.environmentName('env1')).equal('env1', 'B knows no such Environment');
    should(a.storeOf('env1')).be.ok();
    should(b.storeOf('env1')).be.undefined();
  });

  it('gives each runtime its own voice state: Environments, call rounds, retried answers, and its own engine', async function () {
    const one = fakeRuntime(newDir());
    const two = fakeRuntime(newDir());
    const a: VoiceModule = voiceModuleFor(nodeSetRed(one));
    const b: VoiceModule = voiceModuleFor(nodeSetRed(two));
    should(voiceModuleFor(nodeSetRed(one))).equal(a);
    should(a.engine).equal(engineFor(nodeSetRed(one)));
    should(b.engine).equal(engineFor(nodeSetRed(two)));

    a.environments.add(voiceEnvironment('v1', 'tok1') as any, 'tok1');
    should((await a.environments.find('tok1'))?.id).equal('v1');
    should(b.environments.byToken('tok1')).be.undefined();

    a.rounds.of('v1', 'CA1').add({ verb: 'hangup' });
    should(a.rounds.find('v1', 'CA1')?.empty).be.false();
    should(b.rounds.find('v1', 'CA1')).be.undefined();

    should(await a.retried.answer('once', async () => '<Response/>')).equal('<Response/>');
    should(await b.retried.answer('once', async () => '<Response><Hangup/></Response>')).equal('<Response><Hangup/></Response>', 'B never answered that token');
  });

  it('gives each runtime its own team-chat and messaging Environments, each on its runtime’s engine', function () {
    const one = fakeRuntime(newDir());
    const two = fakeRuntime(newDir());
    const chatA: TeamChatModule = teamchatModuleFor(nodeSetRed(one));
    const chatB: TeamChatModule = teamchatModuleFor(nodeSetRed(two));
    should(chatA.environments).not.equal(chatB.environments);
    should(chatA.inbound).not.equal(chatB.inbound);
    should(chatA.engine).equal(engineFor(nodeSetRed(one)));
    chatA.environments.add({ id: 't1' } as any, 'tt1');
    should(chatA.environments.get('t1')).be.ok();
    should(chatB.environments.get('t1')).be.undefined();

    const smsA: MessagingModule = messagingModuleFor(nodeSetRed(one));
    const smsB: MessagingModule = messagingModuleFor(nodeSetRed(two));
    should(smsA.environments).not.equal(smsB.environments);
    should(smsA.refusals).not.equal(smsB.refusals);
    should(smsA.engine).equal(chatA.engine);
    smsA.environments.add({ id: 'm1' } as any, 'mt1');
    should(smsB.environments.get('m1')).be.undefined();
  });
});
