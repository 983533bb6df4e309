import { createHash } from 'node:crypto';
import type { RedisClient } from './connection';

/**
 * The Session store's multi-key steps as Lua scripts: Redis runs each one whole, with no other
 * command in between, so several instances never see half a step. Every script gets the store's
 * key prefix as ARGV[1]. A conversation id is the JSON of [environment, conversation]; keys:
 *   seq, fence            counters (INCR)
 *   items                 hash seq -> inbound item JSON
 *   q:<cid>               list of the conversation's item seqs, oldest first
 *   active                zset cid -> oldest seq: conversations with items
 *   lease:<cid>           "fence:owner", with the lease's expiry
 *   sessions, live        hash id -> Session JSON; hash cid -> live Session id
 *   where                 hash id -> JSON of what indexes the Session (to undo them), and hn: its last history line's number,
 *                         ln: its last log entry's number,
 *                         ch: its Channel (once it is counted in channels), person: its far party ('' none; once indexed in with:)
 *   h:<id>                list of the Session's history lines (JSON), the newest HISTORY_LIMIT
 *   l:<id>                list of the Session's log entries (JSON), the newest LOG_LIMIT
 *   activity[:<env>]      zset id -> last activity; at:<node> zset id -> last activity; nodes: set
 *   timers, timer         zset "id\nkind" -> due; hash "id\nkind" -> {cid, item}
 *   seen:<key>            dedupe marks with their time to live
 *   aside                 list of records set aside (unreadable), the newest 1,000
 *   out:<cid>             a conversation's outbox (voice verbs not yet answered), with a time to live
 *   pace:<key>            when the next slot of a paced action begins (calls placed per second)
 *   channels              hash JSON [environment, channel, 1 waiting at a node or 0 running] -> live Sessions so
 *                         (a field at 0 is removed)
 *   with:<env>\n<person>  set of the ids of the live Sessions of an Environment with that far party
 *   indexed               which of these indexes every Session is in (2: channels and with:), set by indexOlder
 *   fx:<cid>:<seq>        the effects journal of the step handling item seq: effect key -> outcome JSON, and
 *                         .since: when the item was first handed to a step (set by the hand-out; dropped with the item)
 * Timestamps travel as strings: Lua would print a number of milliseconds in %.14g and lose digits.
 */
const ENQUEUE = `
local function enqueue(S, cid, item)
  local seq = redis.call('INCR', S..'seq')
  redis.call('HSET', S..'items', seq, item)
  redis.call('RPUSH', S..'q:'..cid, seq)
  redis.call('ZADD', S..'active', 'NX', seq, cid)
  return seq
end
`;

/**
 * The lease of conversation `cid` for `owner`, for `ms`: the new fence, or nil when another owner
 * holds a live one. The same owner may take its own lease again (with a new fence).
 */
/**
 * Item `seq` of conversation `cid` is handed to a step at `now`: nil the first time; else, its step
 * running again, {when it was first handed out, its journal as HGETALL gives it}.
 */
const HAND_OUT = `
local function handOut(S, cid, seq, now)
  local fx = S..'fx:'..cid..':'..seq
  if redis.call('HSETNX', fx, '.since', now) == 1 then return nil end
  return {redis.call('HGET', fx, '.since'), redis.call('HGETALL', fx)}
end
`;

const TAKE_LEASE = `
local function takeLease(S, cid, owner, ms)
  local key = S..'lease:'..cid
  local current = redis.call('GET', key)
  if current and string.match(current, '^%d+:(.*)$') ~= owner then return nil end
  local fence = redis.call('INCR', S..'fence')
  redis.call('SET', key, fence..':'..owner, 'PX', ms)
  return fence
end
`;

/**
 * The counts per Environment, Channel and waiting or not, moved by the scripts that change a
 * Session (the metrics' gauges read the hash, never the Sessions). A Session is in them once its
 * `where` has `ch`, and in its person's set once it has `person`; one written before them is added
 * by `indexOlder`.
 */
const CHANNEL_COUNTS = `
local function countKey(env, ch, node)
  local waiting = 0
  if node ~= '' then waiting = 1 end
  return cjson.encode({env, ch, waiting})
end
local function countBy(S, field, by)
  if redis.call('HINCRBY', S..'channels', field, by) <= 0 then redis.call('HDEL', S..'channels', field) end
end
`;

const UNINDEX = `${CHANNEL_COUNTS}
local function unindex(S, id)
  local raw = redis.call('HGET', S..'where', id)
  if not raw then return nil end
  local ok, w = pcall(cjson.decode, raw)
  if not ok or type(w) ~= 'table' or type(w.env) ~= 'string' or type(w.node) ~= 'string' or type(w.timers) ~= 'table' then
    -- An entry edited by hand into another shape would fail every commit of its Session (and
    -- mark the store faulty): dropped, so the commit indexes the Session anew. Where it pointed
    -- is unknown, so an index entry or a count it held may stay behind.
    redis.call('HDEL', S..'where', id)
    redis.call('ZREM', S..'activity', id)
    return nil
  end
  redis.call('ZREM', S..'activity', id)
  redis.call('ZREM', S..'activity:'..w.env, id)
  if w.node ~= '' then
    redis.call('ZREM', S..'at:'..w.node, id)
    if redis.call('ZCARD', S..'at:'..w.node) == 0 then redis.call('SREM', S..'nodes', w.node) end
  end
  for _, t in ipairs(w.timers) do
    redis.call('ZREM', S..'timers', t)
    redis.call('HDEL', S..'timer', t)
  end
  if w.person and w.person ~= '' then redis.call('SREM', S..'with:'..w.env..'\\n'..w.person, id) end
  redis.call('HDEL', S..'where', id)
  return w
end
local function drop(S, id)
  local w = unindex(S, id)
  if w then
    if redis.call('HGET', S..'live', w.cid) == id then redis.call('HDEL', S..'live', w.cid) end
    if w.ch then countBy(S, countKey(w.env, w.ch, w.node), -1) end
  end
  redis.call('HDEL', S..'sessions', id)
  redis.call('DEL', S..'h:'..id, S..'l:'..id)
end
`;

export const SCRIPTS = {
  /** ARGV: S, cid, item JSON, dedupe key ('' for none), dedupe ttl ms. Returns the seq, or -1 for a duplicate. */
  record: `${ENQUEUE}
local S = ARGV[1]
if ARGV[4] ~= '' then
  if not redis.call('SET', S..'seen:'..ARGV[4], '1', 'NX', 'PX', ARGV[5]) then return -1 end
end
return enqueue(S, ARGV[2], ARGV[3])`,

  /**
   * ARGV: S, cid, '1' to hand the item to a step ('' to look only), now. Returns {seq, item JSON or
   * false} of the oldest item, or nil; handed out again (its step runs again), also {since, journal}.
   */
  next: `${HAND_OUT}
local S = ARGV[1]
local seq = redis.call('LINDEX', S..'q:'..ARGV[2], 0)
if not seq then return nil end
local item = redis.call('HGET', S..'items', seq)
if ARGV[3] == '1' then
  local again = handOut(S, ARGV[2], seq, ARGV[4])
  if again then return {seq, item, again[1], again[2]} end
end
return {seq, item}`,

  /**
   * ARGV: S, cid, owner, lease ms. Returns the new fence, or nil when another owner holds a live
   * lease. The same owner may take its own lease again (with a new fence): its earlier holder in
   * that process is gone, e.g. a step whose commit and release failed while Redis was away.
   */
  claim: `${TAKE_LEASE}
return takeLease(ARGV[1], ARGV[2], ARGV[3], ARGV[4])`,

  /**
   * ARGV: S, cid, owner, lease ms, the digest of the Session record the caller holds ('' none: the
   * first 16 hex digits of its SHA-1), the seq of the item it holds ('' none), now. `claim`, then
   * `next` (handing the item out) and `liveSession`: {fence} when no item waits, {fence, seq, item
   * JSON or false, live Session id or false, its JSON or false} when one does, and {since, journal}
   * after them when the item was handed out before; nil when another owner holds a live lease. The
   * item and the record are 1 instead when the caller holds them as they are here (a seq is never
   * given twice; the record's digest is taken from what Redis holds), so it need not get them back.
   */
  claimNext: `${TAKE_LEASE}${HAND_OUT}
local S = ARGV[1]
local fence = takeLease(S, ARGV[2], ARGV[3], ARGV[4])
if not fence then return nil end
local seq = redis.call('LINDEX', S..'q:'..ARGV[2], 0)
if not seq then return {fence} end
local item = 1
if seq ~= ARGV[6] then item = redis.call('HGET', S..'items', seq) end
local id = redis.call('HGET', S..'live', ARGV[2])
local session = false
if id then
  session = redis.call('HGET', S..'sessions', id)
  if session and ARGV[5] ~= '' and string.sub(redis.sha1hex(session), 1, 16) == ARGV[5] then session = 1 end
end
local again = handOut(S, ARGV[2], seq, ARGV[7])
if again then return {fence, seq, item, id, session, again[1], again[2]} end
return {fence, seq, item, id, session}`,

  /** ARGV: S, cid, token, seq, effect key, outcome JSON. Records the outcome unless the lease is no longer this holder's (LEASE_LOST). */
  recordEffect: `
local S = ARGV[1]
if redis.call('GET', S..'lease:'..ARGV[2]) ~= ARGV[3] then return redis.error_reply('LEASE_LOST') end
redis.call('HSET', S..'fx:'..ARGV[2]..':'..ARGV[4], ARGV[5], ARGV[6])
return 1`,

  /**
   * ARGV: S, cid, token. Lets go of the lease only when the conversation has no item: 0 when one
   * waits (the lease is kept), 1 when let go or no longer this holder's.
   */
  releaseIfIdle: `
local S = ARGV[1]
local key = S..'lease:'..ARGV[2]
if redis.call('GET', key) ~= ARGV[3] then return 1 end
if redis.call('LLEN', S..'q:'..ARGV[2]) > 0 then return 0 end
redis.call('DEL', key)
return 1`,

  /** ARGV: S, cid, token, lease ms. 1 when the lease is still this holder's (and now extended). */
  renew: `
local key = ARGV[1]..'lease:'..ARGV[2]
if redis.call('GET', key) ~= ARGV[3] then return 0 end
redis.call('PEXPIRE', key, ARGV[4])
return 1`,

  /**
   * ARGV: S, lease ms, then cid and token of each lease an instance holds in a step. Every one of
   * them extended in one call; for each, 1 when it is still this holder's (and now extended).
   */
  renewAll: `
local S = ARGV[1]
local out = {}
for i = 3, #ARGV, 2 do
  local key = S..'lease:'..ARGV[i]
  if redis.call('GET', key) == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[2])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out`,

  /** ARGV: S, cid, token. */
  release: `
local key = ARGV[1]..'lease:'..ARGV[2]
if redis.call('GET', key) == ARGV[3] then redis.call('DEL', key) end
return 1`,

  /**
   * ARGV: S, lease cid, token, step JSON {consumed, marks: [[key, ttl]], op: 'keep'|'remove'|'',
   * id, env, ch, person, cid (the Session's conversation; '' when it is the lease's), node, activity, iv (the item format),
   * timers: [{kind, due, wait: JSON}], hcount: how many history lines are given, hn: the number of
   * the Session's last line (the last given), hmax: how many lines are kept; ln, lmax: the same for
   * its log entries}, Session JSON (without its history and log), then the step's history lines
   * (JSON), then its log entries (JSON), each appended unless the Session already has one of its
   * number (a commit tried again after its reply was lost). The effects journal of the item consumed
   * and of `journal` (an item left to run as a step of its own; '' none) is dropped.
   * With release: 1 in the step JSON, also lets go of the lease when no item waits afterwards
   * (`releaseIfIdle`). Returns 2 when it let go, 1 otherwise. Refuses with LEASE_LOST unless the
   * lease is still this holder's, or (a try again whose first let go) the step is already done.
   */
  commit: `${UNINDEX}
local S = ARGV[1]
local cid = ARGV[2]
local c = cjson.decode(ARGV[4])
if c.cid == '' then c.cid = cid end
if redis.call('GET', S..'lease:'..cid) ~= ARGV[3] then
  -- A commit tried again after its reply was lost, whose first try let the lease go: it is done
  -- when its item is gone and the Session is exactly as it leaves it (a step run again by another
  -- holder would have written another record).
  if c.release == 1 and c.consumed ~= '' and redis.call('HEXISTS', S..'items', c.consumed) == 0 then
    local stored = redis.call('HGET', S..'sessions', c.id)
    if c.op == '' or (c.op == 'keep' and stored == ARGV[5]) or (c.op == 'remove' and not stored) then return 2 end
  end
  return redis.error_reply('LEASE_LOST')
end
-- Lets go of the lease when the step asked and no item waits: 2 when it did, 1 otherwise.
local function done()
  if c.release == 1 and redis.call('LLEN', S..'q:'..cid) == 0 then
    redis.call('DEL', S..'lease:'..cid)
    return 2
  end
  return 1
end
if c.consumed ~= '' then
  local q = S..'q:'..cid
  redis.call('LREM', q, 1, c.consumed)
  redis.call('HDEL', S..'items', c.consumed)
  local head = redis.call('LINDEX', q, 0)
  if head then redis.call('ZADD', S..'active', 'XX', head, cid) else redis.call('ZREM', S..'active', cid) end
  redis.call('DEL', S..'fx:'..cid..':'..c.consumed)
end
if c.journal and c.journal ~= '' then redis.call('DEL', S..'fx:'..cid..':'..c.journal) end
for _, m in ipairs(c.marks) do redis.call('SET', S..'seen:'..m[1], '1', 'PX', m[2]) end
if c.op == '' then return done() end
local id = c.id
local was = unindex(S, id)
local counted = nil
if was and was.ch then counted = countKey(was.env, was.ch, was.node) end
if c.op == 'remove' then
  redis.call('HDEL', S..'sessions', id)
  redis.call('DEL', S..'h:'..id, S..'l:'..id)
  if redis.call('HGET', S..'live', c.cid) == id then redis.call('HDEL', S..'live', c.cid) end
  if counted then countBy(S, counted, -1) end
  return done()
end
local previous = redis.call('HGET', S..'live', c.cid)
if previous and previous ~= id then drop(S, previous) end
-- A step that leaves the Session in the same Environment, Channel and state writes no count.
local count = countKey(c.env, c.ch, c.node)
if count ~= counted then
  if counted then countBy(S, counted, -1) end
  countBy(S, count, 1)
end
redis.call('HSET', S..'sessions', id, ARGV[5])
redis.call('HSET', S..'live', c.cid, id)
redis.call('ZADD', S..'activity', c.activity, id)
redis.call('ZADD', S..'activity:'..c.env, c.activity, id)
if c.node ~= '' then
  redis.call('ZADD', S..'at:'..c.node, c.activity, id)
  redis.call('SADD', S..'nodes', c.node)
end
if c.person ~= '' then redis.call('SADD', S..'with:'..c.env..'\\n'..c.person, id) end
-- Appends ARGV[from..to] to the list at key, numbered so the last is last, those above had (the
-- number the Session's previous commit left); keeps the last max. Returns the number now last.
local function append(key, from, to, last, had, max)
  local n = last - (to - from)
  for i = from, to do
    if n > had then redis.call('RPUSH', key, ARGV[i]) end
    n = n + 1
  end
  if to >= from then redis.call('LTRIM', key, -max, -1) end
  return math.max(had, last)
end
local hcount = tonumber(c.hcount)
local hn = append(S..'h:'..id, 6, 5 + hcount, tonumber(c.hn), tonumber(was and was.hn or 0), tonumber(c.hmax))
local ln = append(S..'l:'..id, 6 + hcount, #ARGV, tonumber(c.ln), tonumber(was and was.ln or 0), tonumber(c.lmax))
local members = {}
local conversation = nil
if #c.timers > 0 then conversation = cjson.encode(cjson.decode(c.cid)[2]) end
for _, t in ipairs(c.timers) do
  local member = id..'\\n'..t.kind
  -- The item the timer puts in its conversation when due, written here from its parts so that a
  -- step sends the parts (about 30 bytes) rather than the item (about 330); stored as before.
  local item = '{"v":'..c.iv..',"environment":'..cjson.encode(c.env)..',"conversation":'..conversation..
    ',"kind":'..cjson.encode(t.kind)..',"payload":{"sessionId":'..cjson.encode(id)..',"due":'..t.due..',"wait":'..t.wait..'},"at":'..t.due..'}'
  redis.call('ZADD', S..'timers', t.due, member)
  redis.call('HSET', S..'timer', member, cjson.encode({cid = c.cid, item = item}))
  table.insert(members, member)
end
redis.call('HSET', S..'where', id, cjson.encode({env = c.env, ch = c.ch, person = c.person, cid = c.cid, node = c.node, timers = members, hn = hn, ln = ln}))
return done()`,

  /** ARGV: S, now, limit. Moves due timers into their conversations; returns their cids (each timer once). */
  takeDueTimers: `${ENQUEUE}
local S = ARGV[1]
local due = redis.call('ZRANGEBYSCORE', S..'timers', '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, member in ipairs(due) do
  local raw = redis.call('HGET', S..'timer', member)
  redis.call('ZREM', S..'timers', member)
  redis.call('HDEL', S..'timer', member)
  if raw then
    local t = cjson.decode(raw)
    enqueue(S, t.cid, t.item)
    table.insert(out, t.cid)
  end
end
return out`,

  /** ARGV: S, limit, how many conversations to look at most, owner ('' for none). Conversations with items and no live lease (or one of `owner`'s), oldest first. */
  orphans: `
local S = ARGV[1]
local limit = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local mine = ARGV[4]
local out = {}
local start = 0
while #out < limit and start < cap do
  local batch = redis.call('ZRANGE', S..'active', start, start + 99)
  if #batch == 0 then break end
  for _, cid in ipairs(batch) do
    local lease = redis.call('GET', S..'lease:'..cid)
    if not lease or (mine ~= '' and string.match(lease, '^%d+:(.*)$') == mine) then
      table.insert(out, cid)
      if #out >= limit then break end
    end
  end
  start = start + 100
end
return out`,

  /** ARGV: S, cid, seq, reason, now. Takes an unreadable item out of its conversation, keeping it aside with its conversation (an item's body does not name it). */
  setAsideItem: `
local S = ARGV[1]
local q = S..'q:'..ARGV[2]
local item = redis.call('HGET', S..'items', ARGV[3])
redis.call('LREM', q, 1, ARGV[3])
redis.call('HDEL', S..'items', ARGV[3])
redis.call('DEL', S..'fx:'..ARGV[2]..':'..ARGV[3])
local head = redis.call('LINDEX', q, 0)
if head then redis.call('ZADD', S..'active', 'XX', head, ARGV[2]) else redis.call('ZREM', S..'active', ARGV[2]) end
redis.call('LPUSH', S..'aside', cjson.encode({what = 'inbound', key = ARGV[3], conversation = ARGV[2], reason = ARGV[4], content = item or '', at = ARGV[5]}))
redis.call('LTRIM', S..'aside', 0, 999)
return 1`,

  /** ARGV: S, id, reason, now. Takes a malformed Session out, keeping it aside. */
  setAsideSession: `${UNINDEX}
local S = ARGV[1]
local content = redis.call('HGET', S..'sessions', ARGV[2])
drop(S, ARGV[2])
redis.call('LPUSH', S..'aside', cjson.encode({what = 'session', key = ARGV[2], reason = ARGV[3], content = content or '', at = ARGV[4]}))
redis.call('LTRIM', S..'aside', 0, 999)
return 1`,

  /** ARGV: S, cid, ttl ms, item JSON… Appends to the conversation's outbox. */
  pushOutput: `
local key = ARGV[1]..'out:'..ARGV[2]
for i = 4, #ARGV do redis.call('RPUSH', key, ARGV[i]) end
redis.call('PEXPIRE', key, ARGV[3])
return 1`,

  /** ARGV: S, cid. Takes the whole outbox, oldest first. */
  takeOutput: `
local key = ARGV[1]..'out:'..ARGV[2]
local items = redis.call('LRANGE', key, 0, -1)
redis.call('DEL', key)
return items`,

  /** ARGV: S, key, interval ms, now. Takes the next slot: returns when it begins (as a string). */
  takeSlot: `
local key = ARGV[1]..'pace:'..ARGV[2]
local interval = tonumber(ARGV[3])
local at = math.max(tonumber(ARGV[4]), tonumber(redis.call('GET', key) or '0'))
redis.call('SET', key, string.format('%d', at + interval), 'PX', interval + 60000)
return string.format('%d', at)`,

  /**
   * ARGV: S, HSCAN cursor, how many to look at, the version of the indexes. One batch of the
   * one-time indexing of Sessions written before the counts per Channel (no `ch` in their `where`)
   * or the person index (no `person`): each is counted in `channels` with its Channel, and put in
   * its person's set (its `person`, or a voice Session's `binding.from`, as record-check.ts reads
   * such a record), from its record, and that recorded in `where`; so a batch seen twice (HSCAN may
   * return a Session again) or run by two instances at once indexes it once, and a commit in
   * between finds it indexed or not, as it is. Returns the next cursor; at '0' the data is marked.
   */
  indexOlder: `${CHANNEL_COUNTS}
local S = ARGV[1]
local function personOf(record)
  if type(record.person) == 'string' then return record.person end
  if record.channel == 'TelcoVoice' and type(record.binding) == 'table' and type(record.binding.from) == 'string' then return record.binding.from end
  return ''
end
local scan = redis.call('HSCAN', S..'where', ARGV[2], 'COUNT', tonumber(ARGV[3]))
local found = scan[2]
for i = 1, #found, 2 do
  local id = found[i]
  local ok, w = pcall(cjson.decode, found[i + 1])
  if ok and type(w) == 'table' and type(w.env) == 'string' and (not w.ch or not w.person) then
    local raw = redis.call('HGET', S..'sessions', id)
    local okr, record = false, nil
    if raw then okr, record = pcall(cjson.decode, raw) end
    if okr and type(record) == 'table' and type(record.channel) == 'string' then
      if not w.ch then
        w.ch = record.channel
        countBy(S, countKey(w.env, w.ch, w.node or ''), 1)
      end
      if not w.person then
        w.person = personOf(record)
        if w.person ~= '' then redis.call('SADD', S..'with:'..w.env..'\\n'..w.person, id) end
      end
      redis.call('HSET', S..'where', id, cjson.encode(w))
    end
  end
end
if scan[1] == '0' then redis.call('SET', S..'indexed', ARGV[4]) end
return scan[1]`,

  /** ARGV: S, environment, person. The live Sessions with that far party: {id, Session JSON, id, Session JSON, …}. */
  liveWith: `
local S = ARGV[1]
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', S..'with:'..ARGV[2]..'\\n'..ARGV[3])) do
  local raw = redis.call('HGET', S..'sessions', id)
  if raw then
    table.insert(out, id)
    table.insert(out, raw)
  end
end
return out`,

  /** ARGV: S. Waiting Sessions by node: {node, count, node, count, …}. */
  waitingByNode: `
local S = ARGV[1]
local out = {}
for _, node in ipairs(redis.call('SMEMBERS', S..'nodes')) do
  table.insert(out, node)
  table.insert(out, redis.call('ZCARD', S..'at:'..node))
end
return out`,
} as const;

export type ScriptName = keyof typeof SCRIPTS;

const SHA = Object.fromEntries(Object.entries(SCRIPTS).map(([name, lua]) => [name, createHash('sha1').update(lua).digest('hex')])) as Record<
  ScriptName,
  string
>;

/** Runs a script by its SHA1 (one short command), sending the source only when Redis does not know it yet (first use, or after a restart). */
export async function runScript(client: RedisClient, name: ScriptName, args: string[]): Promise<unknown> {
  try {
    return await client.evalSha(SHA[name], { arguments: args });
  } catch (err) {
    if (!/NOSCRIPT/.test((err as Error).message)) throw err;
    return client.eval(SCRIPTS[name], { arguments: args });
  }
}
