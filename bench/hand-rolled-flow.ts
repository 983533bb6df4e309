import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/harness/node-red';

/**
 * The peer of the messaging phase: the same job as the bench's messaging Process (open on the
 * first message, answer each next one with "You said …"), built by hand from Node-RED's core
 * nodes as a user would without this package: `http in` -> a function node checking Twilio's
 * signature with the `twilio` package -> a function node keeping the conversation in flow context,
 * keyed by its two numbers -> `http request` to the Messages API -> `http response`. Its flow
 * context lives in memory, it answers a redelivered message twice, and a deploy or a crash
 * forgets every conversation: what the Session adds is what the comparison costs.
 */
export const HAND_ROLLED_PATH = '/bench/hand-rolled/sms';

/** The function nodes' external module, linked into the runtime's user dir (runtime.ts). */
export const HAND_ROLLED_MODULE = 'twilio';

/** The signature over the URL Twilio was given; a wrong one gets 403 and nothing else. */
const CHECK_SIGNATURE = `const url = env.get('PUBLIC_BASE_URL') + '${HAND_ROLLED_PATH}';
const signature = msg.req.headers['x-twilio-signature'] || '';
if (twilio.validateRequest(env.get('TWILIO_AUTH_TOKEN'), signature, url, msg.payload)) return [msg, null];
msg.statusCode = 403;
msg.payload = '';
return [null, msg];`;

/** The first message opens the conversation and sends nothing; each next one is answered. */
const CONVERSATION = `const { From: from, To: to, Body: body } = msg.payload;
const key = 'sms:' + from + ':' + to;
const conversation = flow.get(key);
if (!conversation) {
  flow.set(key, { messages: 1, answer: '' });
  return [null, msg];
}
conversation.messages += 1;
conversation.answer = body;
flow.set(key, conversation);
msg.headers = { 'content-type': 'application/x-www-form-urlencoded' };
msg.payload = { To: from, From: to, Body: 'You said ' + body };
return [msg, null];`;

export function handRolledFlow(publicBaseUrl: string, twilioApiUrl: string, creds: { accountSid: string; authToken: string }): object[] {
  const z = 'tHand';
  return [
    {
      id: z,
      type: 'tab',
      label: 'Messaging by hand (core nodes)',
      env: [
        { name: 'PUBLIC_BASE_URL', value: publicBaseUrl, type: 'str' },
        { name: 'TWILIO_AUTH_TOKEN', value: creds.authToken, type: 'str' },
      ],
    },
    { id: 'h-in', type: 'http in', z, url: HAND_ROLLED_PATH, method: 'post', upload: false, wires: [['h-signature']] },
    {
      id: 'h-signature',
      type: 'function',
      z,
      name: 'Twilio signature',
      func: CHECK_SIGNATURE,
      outputs: 2,
      libs: [{ var: 'twilio', module: HAND_ROLLED_MODULE }],
      wires: [['h-conversation'], ['h-out']],
    },
    { id: 'h-conversation', type: 'function', z, name: 'conversation', func: CONVERSATION, outputs: 2, libs: [], wires: [['h-send'], ['h-twiml']] },
    {
      id: 'h-send',
      type: 'http request',
      z,
      name: 'Messages API',
      method: 'POST',
      ret: 'obj',
      paytoqs: 'ignore',
      url: `${twilioApiUrl}/2010-04-01/Accounts/${creds.accountSid}/Messages.json`,
      tls: '',
      persist: true,
      proxy: '',
      insecureHTTPParser: false,
      authType: 'basic',
      senderr: false,
      headers: [],
      credentials: { user: creds.accountSid, password: creds.authToken },
      wires: [['h-twiml']],
    },
    // The answer to Twilio's webhook: empty TwiML, not the Messages API's answer (its status and headers).
    {
      id: 'h-twiml',
      type: 'change',
      z,
      name: 'empty TwiML',
      rules: [
        { t: 'set', p: 'payload', pt: 'msg', to: '<Response></Response>', tot: 'str' },
        { t: 'set', p: 'headers', pt: 'msg', to: '{"content-type":"text/xml"}', tot: 'json' },
        { t: 'set', p: 'statusCode', pt: 'msg', to: '200', tot: 'num' },
      ],
      wires: [['h-out']],
    },
    { id: 'h-out', type: 'http response', z, statusCode: '', headers: {}, wires: [] },
  ];
}

/**
 * A user dir whose function nodes may load `twilio` (the hand-rolled flow's signature check)
 * without installing it: Node-RED loads a function node's module from `<userDir>/node_modules`
 * when `<userDir>/package.json` lists it, and installs it with npm otherwise. It is linked from
 * this repository's node_modules.
 */
export function userDirWithTwilio(): string {
  const userDir = mkdtempSync(join(tmpdir(), 'cs-bench-'));
  mkdirSync(join(userDir, 'node_modules'));
  symlinkSync(join(REPO_ROOT, 'node_modules', HAND_ROLLED_MODULE), join(userDir, 'node_modules', HAND_ROLLED_MODULE), 'dir');
  writeFileSync(join(userDir, 'package.json'), JSON.stringify({ name: 'bench-user-dir', private: true, dependencies: { [HAND_ROLLED_MODULE]: '*' } }));
  return userDir;
}
