import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import should from 'should';
import type sqliteContextModule from '../../src/sqlite-context';
import { loadSqlite, type DatabaseConstructor } from '../../src/stores/sqlite/sqlite';
import type { SqliteContextStore } from '../../src/stores/sqlite/context-store';
import { node, tab, type FlowNode } from '../harness/flows';
import { NodeRed, eventually } from '../harness/node-red';
import { SMS_Q2, StoreFaultRig } from '../harness/store-fault-rig';
import { messagingEnvironment } from '../fakes/twilio-messaging-webhooks';

// The built package, as settings.js requires it: its log lines read their English catalog beside
// the node sets (dist/nodes/locales), which a copy compiled from src/ has not.
const sqliteContext: typeof sqliteContextModule = require('../../../dist/sqlite-context.js');

type Values = unknown[];

const DatabaseSync = loadSqlite() as DatabaseConstructor;
const readOnly = { readOnly: true } as { timeout?: number };

/** The callback form, as a promise of what the store called back with. */
function called<T extends Values>(fn: (cb: (err: Error | null | undefined, ...values: unknown[]) => void) => void): Promise<{ err?: Error | null; values: T }> {
  return new Promise((resolve) => fn((err, ...values) => resolve({ err, values: values as T })));
}

/** What another connection (a person with the sqlite3 shell, a restarted Node-RED) reads from the file. */
function rowsIn(path: string, scope: string): Record<string, unknown> {
  const db = new DatabaseSync(path, readOnly);
  try {
    return Object.fromEntries(
      db
        .prepare('SELECT key, value FROM context WHERE scope = ?')
        .all(scope)
        .map((r) => [String(r.key), JSON.parse(String(r.value))]),
    );
  } finally {
    db.close();
  }
}

describe('the sqlite-context store', function () {
  let dir: string;
  let store: SqliteContextStore;
  let path: string;
  const warnings: string[] = [];

  beforeEach(async function () {
    dir = mkdtempSync(join(tmpdir(), 'cs-sqlite-context-'));
    path = join(dir, 'channel-sessions.db');
    store = sqliteContext({ settings: { userDir: dir } });
    await store.open();
  });
  afterEach(async function () {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is found by Node-RED as a context store module and names itself without a path', function () {
    should(typeof sqliteContext).equal('function');
    should(String(sqliteContext)).equal('channel-sessions sqlite-context');
    should(sqliteContext.sqliteStoreOptions({ settings: { userDir: dir } })).eql({ path, synchronous: 'NORMAL' });
    should(sqliteContext.sqliteStoreOptions({ path: 'other.db', synchronous: 'FULL', settings: { userDir: dir } })).eql({
      path: join(dir, 'other.db'),
      synchronous: 'FULL',
    });
    should(() => sqliteContext({ synchronous: 'OFF' })).throw(/config.synchronous must be 'NORMAL' or 'FULL'/);
    should(() => sqliteContext({ path: 42 })).throw(/config.path must be the path of a database file/);
  });

  it("answers the synchronous forms, nested keys and several keys at once, as Node-RED's memory store does", function () {
    store.set('flow1', 'count', 1);
    store.set('flow1', 'user.name', 'Ann');
    store.set('flow1', 'list[1]', 'b');
    store.set('flow1', ['x', 'y'], [10, 20]);
    should(store.get('flow1', 'count')).equal(1);
    should(store.get('flow1', 'user')).eql({ name: 'Ann' });
    should(store.get('flow1', 'user.name')).equal('Ann');
    should(store.get('flow1', 'list')).eql([null, 'b']);
    should(store.get('flow1', ['x', 'y', 'missing', 'user.none'])).eql([10, 20, undefined, undefined]);
    should(store.keys('flow1')).eql(['count', 'user', 'list', 'x', 'y']);
    store.set('flow1', 'count', 2);
    should(store.keys('flow1')).eql(['count', 'user', 'list', 'x', 'y'], 'an update keeps the key in its place');
    store.set('flow1', 'user.name', undefined);
    should(store.get('flow1', 'user')).eql({});
    store.set('flow1', 'x', undefined);
    should(store.keys('flow1')).eql(['count', 'user', 'list', 'y']);
    should(store.keys('other')).eql([]);
    should(() => store.get('flow1', 'a..b')).throw(/Invalid context key/);
  });

  it('answers the callback forms', async function () {
    should((await called((cb) => store.set('global', 'greeting', { text: 'hi' }, cb))).err).not.be.ok();
    should(await called((cb) => store.get('global', 'greeting.text', cb))).eql({ err: null, values: ['hi'] });
    should(await called((cb) => store.get('global', ['greeting', 'none'], cb))).eql({ err: null, values: [{ text: 'hi' }, undefined] });
    should(await called((cb) => store.keys('global', cb))).eql({ err: null, values: [['greeting']] });
    const bad = await called((cb) => store.get('global', 'a[', cb));
    should(bad.err?.message).match(/Invalid context key/);
  });

  it('has every set in the file when it returns: nothing waits for a flush', function () {
    store.set('node1:flow1', 'visits', 7);
    store.set('global', 'config', { on: true });
    should(rowsIn(path, 'node1:flow1')).eql({ visits: 7 });
    should(rowsIn(path, 'global')).eql({ config: { on: true } });
  });

  it('refuses a value JSON cannot hold with an error naming the store, and writes nothing of that set', async function () {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    should(() => store.set('flow1', ['fine', 'loop'], ['kept?', cycle])).throw(/context store sqlite-context \(.*channel-sessions\.db\): .*circular/i);
    should(store.keys('flow1')).eql([], 'the set is one transaction');
    const { err } = await called((cb) => store.set('flow1', 'n', 10n, cb));
    should(err?.message).match(/BigInt/);
  });

  it('a value edited by hand into what is not JSON: reading it is an error naming the key, a nested set leaves it, the other keys and a new value work', async function () {
    store.set('global', 'profile', { name: 'Ann', visits: 3 });
    store.set('global', 'other', 'fine');
    const edit = new DatabaseSync(path);
    edit.prepare("UPDATE context SET value = ? WHERE scope = 'global' AND key = 'profile'").run('{"name": "Ann", visits: 3');
    edit.close();
    should(() => store.get('global', 'profile.name')).throw(
      /context store sqlite-context \(.*channel-sessions\.db\): the value of profile \(global\) is not JSON/,
    );
    should((await called((cb) => store.get('global', 'profile', cb))).err?.message).match(/the value of profile \(global\) is not JSON/);
    should(() => store.set('global', 'profile.visits', 4)).throw(/the value of profile \(global\) is not JSON/);
    should(new DatabaseSync(path, readOnly).prepare("SELECT value FROM context WHERE key = 'profile'").get()?.value).equal('{"name": "Ann", visits: 3');
    should(store.get('global', 'other')).equal('fine');
    should(store.keys('global')).eql(['profile', 'other']);
    store.set('global', 'profile', { name: 'Bo' });
    should(store.get('global', 'profile.name')).equal('Bo');
  });

  it('deletes a scope, and cleans the scopes of nodes no longer deployed (never global)', async function () {
    store.set('n1:f1', 'a', 1);
    store.set('n2:f1', 'a', 2);
    store.set('f1', 'a', 3);
    store.set('global', 'a', 4);
    await store.delete('n1:f1');
    should(store.keys('n1:f1')).eql([]);
    await store.clean(['f1']);
    should(store.keys('n2:f1')).eql([]);
    should(store.get('f1', 'a')).equal(3);
    should(store.get('global', 'a')).equal(4);
  });

  it("shares the file with the Session store: the durable default's tables and the context in one database", function () {
    store.set('global', 'a', 1);
    const db = new DatabaseSync(path, readOnly);
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((r) => String(r.name));
      should(tables).containDeep(['inbound', 'sessions', 'timers', 'context']);
    } finally {
      db.close();
    }
  });

  it('a file that is not a database is set aside, named in the log, and a new one started', async function () {
    await store.close();
    const other = join(dir, 'damaged.db');
    writeFileSync(other, Buffer.alloc(8192, 0x41));
    const errors: string[] = [];
    const damaged = sqliteContext({ path: other, settings: { userDir: dir } });
    (damaged as unknown as { log: unknown }).log = { warn: (l: string) => warnings.push(l), error: (l: string) => errors.push(l) };
    await damaged.open();
    damaged.set('global', 'a', 1);
    should(damaged.get('global', 'a')).equal(1);
    should(errors.join('\n')).match(/damaged\.db is not a readable database .* moved to .*damaged\.db\.corrupt-/);
    should(readdirSync(dir).some((f) => f.startsWith('damaged.db.corrupt-'))).be.true();
    await damaged.close();
  });

  it('opens without failing where the file cannot be made yet (Node-RED still starts); flows get an error naming it until it can', async function () {
    const missing = join(dir, 'not-yet', 'ctx.db');
    const later = sqliteContext({ path: missing, settings: { userDir: dir } });
    (later as unknown as { log: unknown }).log = { warn: (l: string) => warnings.push(l), error: (l: string) => warnings.push(l) };
    await later.open();
    should(warnings.join('\n')).match(/sqlite-context: .*unable to open database file/);
    should(() => later.get('global', 'a')).throw(/context store sqlite-context \(.*not-yet\/ctx\.db\): .*the directory .*not-yet does not exist/);
    mkdirSync(join(dir, 'not-yet'));
    later.set('global', 'a', 'now');
    should(later.get('global', 'a')).equal('now');
    await later.close();
  });
});

/** HTTP routes whose function nodes count visits in the `durable` store (sync form) and read a global set by callback. */
function contextRoutes(z: string): FlowNode[] {
  const route = (id: string, url: string, func: string) => [
    node('http in', `${id}-in`, z, { url, method: 'get' }, [[`${id}-fn`]]),
    node('function', `${id}-fn`, z, { func, outputs: 1 }, [[`${id}-out`]]),
    node('http response', `${id}-out`, z, {}),
  ];
  return [
    ...route(
      'visit',
      '/ctx/visit',
      `const n = (flow.get('visits', 'durable') || 0) + 1; flow.set('visits', n, 'durable'); msg.payload = { visits: n }; return msg;`,
    ),
    ...route('note', '/ctx/note', `global.set('note', msg.req.query.text, 'durable', (err) => { msg.payload = { ok: !err }; node.send(msg); });`),
    ...route(
      'read',
      '/ctx/read',
      `global.get('note', 'durable', (err, note) => { msg.payload = { note, visits: flow.get('visits', 'durable') }; node.send(msg); });`,
    ),
  ];
}

describe('Sessions and flow context in a sqlite-context store, across kill -9', function () {
  this.timeout(60000);
  let rig: StoreFaultRig;

  before(async function () {
    rig = await StoreFaultRig.start();
  });
  after(async function () {
    await rig?.close();
  });

  it('keeps what the flows set and where each conversation was, in one file, with no warning at deploy', async function () {
    rig.red = await NodeRed.start({
      settings: { channelSessions: { sweepInterval: 1 } },
      settingsCode: `module.exports.contextStorage = {
  default: { module: 'memory' },
  durable: { module: require('@channel-sessions/node-red/sqlite-context') },
};`,
    });
    const { red } = rig;
    const flows = rig
      .flows()
      .filter((n) => n.type !== 'teamchat-environment' && n.z !== 'sfTabSlack' && n.id !== 'sfTabSlack')
      .map((n) =>
        n.type === 'telco-messaging-environment' ? messagingEnvironment('sfEnvSms', rig.smsToken, rig.twilioApi, red, { sessionStore: 'durable' }) : n,
      );
    await red.deploy([...flows, tab('ctxTab', 'context'), ...contextRoutes('ctxTab')]);
    await red.waitForLog(/Context store\s+: 'durable' \[module=channel-sessions sqlite-context\]/);

    const sms = rig.smsUsers(3, '+1555720');
    for (const i of sms.keys()) should((await rig.sendSms(sms, i, 0)).status).equal(200);
    await eventually(() => sms.every((s) => rig.texts(s.user).includes('Q1?')), 15000, 'every first question');
    for (const i of sms.keys()) should((await rig.sendSms(sms, i, 1)).status).equal(200);
    for (let i = 0; i < 3; i++) should((await red.request('GET', '/ctx/visit')).body).eql({ visits: i + 1 });
    should((await red.request('GET', '/ctx/note?text=kept')).body).eql({ ok: true });
    await eventually(() => sms.every((s) => rig.texts(s.user).includes('Q2?')), 15000, 'every second question');
    // Saved, not only sent: a kill between the two would run that step again (at least once).
    for (const s of sms) await rig.waitingAt(s.user, SMS_Q2);

    await red.kill();
    await red.relaunch();
    should((await red.request('GET', '/ctx/read')).body).eql({ note: 'kept', visits: 3 });
    for (const i of sms.keys()) should((await rig.sendSms(sms, i, 2)).status).equal(200);
    await eventually(() => sms.every((s, i) => rig.texts(s.user).includes(`Thanks one-${i},two-${i}`)), 15000, 'every survey to complete');
    for (const [i, s] of sms.entries()) should(rig.texts(s.user)).eql(['Q1?', 'Q2?', `Thanks one-${i},two-${i}`]);

    // Named, and durable: no deploy warning about what a crash would lose.
    should(red.logs.join('\n')).not.match(/Session store "durable".*(crash|memory)/);
    // One file under the user dir holds both: what Node-RED's context and the Sessions wrote.
    const count = (sql: string) => {
      const db = new DatabaseSync(join(red.userDir, 'channel-sessions.db'), readOnly);
      try {
        return Number(db.prepare(sql).get()?.n);
      } finally {
        db.close();
      }
    };
    should(count("SELECT COUNT(*) AS n FROM context WHERE key = 'visits'")).equal(1);
    // The last step's reply goes out before its commit consumes the message: consumed soon after.
    await eventually(() => count('SELECT COUNT(*) AS n FROM inbound') === 0, 10000, 'every message consumed');
  });
});
