import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import should from 'should';
import { runEditorScripts, type EditorDefinition } from '../harness/editor-script';
import { helper, load } from '../harness/helper';
import { NODE_RED_DIR, REPO_ROOT } from '../harness/node-red';

/** The node types of each node set and the properties each stores in flow JSON: the names flows are built against. */
const NODE_SETS: Record<string, Record<string, string[]>> = {
  'channel-sessions-core': {
    'session-start': ['teamchat', 'voice', 'messaging', 'testData'],
    'output-task': ['text', 'attachments'],
    'input-task': ['prompt', 'resultVariable', 'filesVariable', 'timeout'],
    'end-task': [],
  },
  'channel-sessions-teamchat': {
    'teamchat-environment': ['name', 'sessionMode', 'useThreads', 'startFromDirect', 'startFromMention', 'startFromChannel', 'defaultChannel', 'publicBaseUrl', 'apiUrl', 'sessionStore', 'maxSessions'],
    'teamchat-start': ['environment', 'variable', 'testData', 'suggestedPrompts'],
    'teamchat-block-message': ['environment', 'channel', 'notificationText', 'blocks'],
    'teamchat-notification': ['environment', 'channel', 'message', 'attachments'],
    'teamchat-post-message': [],
    'teamchat-open': ['environment', 'variable', 'user', 'userType', 'channel', 'channelType'],
    'teamchat-status': ['status', 'loadingMessages'],
    'teamchat-stream': ['feedback'],
  },
  'channel-sessions-voice': {
    'telco-voice-environment': ['name', 'phoneNumberSid', 'defaultVoice', 'defaultLanguage', 'speechModel', 'autoDeploy', 'validateSignatures', 'publicBaseUrl', 'apiUrl', 'callerId', 'callsPerSecond', 'sessionStore', 'maxSessions'],
    'telco-call-start': ['environment', 'variable', 'testData'],
    'telco-call-out': ['environment', 'variable', 'to', 'toType', 'machineDetection', 'ringTimeout', 'testData'],
    'telco-voice-play': ['mediaUrl', 'loop'],
    'telco-voice-record': ['maxLength', 'playBeep', 'trim', 'transcribe', 'urlVariable', 'sidVariable'],
    'telco-voice-dial': ['destination', 'timeout', 'record', 'callerId'],
    'telco-voice-agent': ['url', 'welcomeGreeting', 'language', 'voice', 'ttsProvider', 'transcriptionProvider', 'interruptible', 'dtmfDetection', 'parameters', 'attributes', 'resultVariable'],
    'telco-voice-agent-say': [],
  },
  'channel-sessions-messaging': {
    'telco-messaging-environment': ['name', 'messagingServiceSid', 'autoDeploy', 'validateSignatures', 'publicBaseUrl', 'apiUrl', 'sessionStore', 'maxSessions'],
    'telco-sms-start': ['environment', 'variable', 'testData'],
    'telco-messenger-start': ['environment', 'variable', 'testData'],
    'telco-messenger-buttons': ['contentSid', 'variables', 'previewText', 'resultVariable'],
    'telco-message-out': ['environment', 'variable', 'to', 'toType', 'from', 'fromType'],
  },
};
const OUTPUTS: Record<string, number> = { 'end-task': 0, 'teamchat-post-message': 0, 'telco-voice-agent': 3, 'telco-call-out': 4 };
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
const loader = require(require.resolve('@node-red/registry/lib/loader', { paths: [NODE_RED_DIR] }));

/** Every node type loads in the runtime and in the editor, with its edit dialog, help and labels. */
describe('node sets: runtime types, editor files and help (node-red-node-test-helper)', function () {
  it('package.json names exactly the node sets of the contract', function () {
    should(Object.keys(pkg['node-red'].nodes).sort()).eql(Object.keys(NODE_SETS).sort());
  });

  it('every type loads from one flow with its Environment and credentials; the editor keeps the same credentials', async function () {
    const environments: Record<string, string> = {
      'channel-sessions-teamchat': 'teamchat-environment', 'channel-sessions-voice': 'telco-voice-environment', 'channel-sessions-messaging': 'telco-messaging-environment',
    };
    // Loading the sets registers each type's credentials; the flow then fills every one of them.
    await load([]);
    await helper.unload();
    const credentials: Record<string, Record<string, string>> = {};
    const flow: Array<{ id: string; type: string; [k: string]: unknown }> = [{ id: 'tab1', type: 'tab' }];
    for (const [set, types] of Object.entries(NODE_SETS)) {
      const env = environments[set];
      for (const type of Object.keys(types)) {
        if (type === env) {
          flow.push({ id: `id-${type}`, type, name: type });
          credentials[`id-${type}`] = Object.fromEntries(Object.keys(helper.credentials.getDefinition(type) ?? {}).map((k) => [k, `${k}-value`]));
        } else {
          flow.push({ id: `id-${type}`, type, z: 'tab1', wires: [], ...(env ? { environment: `id-${env}` } : {}) });
        }
      }
    }
    await load(flow, credentials);
    try {
      for (const [set, types] of Object.entries(NODE_SETS)) {
        const { types: editor } = runEditorScripts(join(REPO_ROOT, pkg['node-red'].nodes[set].replace(/\.js$/, '.html')));
        for (const type of Object.keys(types)) {
          should(helper.getNode(`id-${type}`)).have.property('type', type);
          const runtime = helper.credentials.getDefinition(type);
          if (credentials[`id-${type}`]) {
            should(Object.keys(credentials[`id-${type}`])).not.be.empty();
            should(helper.getNode(`id-${type}`).credentials).eql(credentials[`id-${type}`]);
          }
          const dialog = editor.get(type)?.credentials;
          if (runtime || dialog) should(Object.keys(dialog ?? {}).sort()).eql(Object.keys(runtime ?? {}).sort(), `${type} credentials`);
        }
      }
    } finally {
      await helper.unload();
    }
  });

  for (const [set, types] of Object.entries(NODE_SETS)) {
    describe(set, function () {
      const js = join(REPO_ROOT, pkg['node-red'].nodes[set]);
      const html = js.replace(/\.js$/, '.html');
      let editor: Map<string, EditorDefinition>;
      before(function () {
        editor = runEditorScripts(html).types;
      });

      it('registers each type in the editor from the html beside its .js, with a dialog template, in the palette category', function () {
        should(existsSync(js)).be.true(`${js} built`);
        const templates = [...readFileSync(html, 'utf8').matchAll(/data-template-name="([^"]+)"/g)].map((m) => m[1]);
        should(templates.sort()).eql(Object.keys(types).sort());
        should([...editor.keys()].sort()).eql(Object.keys(types).sort());
        for (const [type, properties] of Object.entries(types)) {
          const def = editor.get(type)!;
          // The retired post message stays registered for old flows but leaves the palette (Node-RED hides 'deprecated').
          const category = type.endsWith('-environment') ? 'config' : type === 'teamchat-post-message' ? 'deprecated' : 'channel sessions';
          should(def.category).equal(category, `${type} category`);
          should(Object.keys(def.defaults ?? {})).containDeep(properties);
          if (def.category !== 'config') should(def.outputs).equal(OUTPUTS[type] ?? (type.endsWith('start') ? 1 : 2), `${type} outputs`);
        }
      });

      it('has help for each type where Node-RED looks (locales/en-US beside the .js), in core style', function () {
        const help: string = loader.getNodeHelp({ template: html, module: pkg.name, help: {} }, 'en-US') ?? '';
        should(help).not.be.empty();
        for (const type of Object.keys(types)) {
          const section = help.match(new RegExp(`<script type="text/html" data-help-name="${type}">([\\s\\S]*?)</script>`));
          should.exist(section, `${type} help`);
          should(section![1]).match(/<h3>/, `${type} help has sections`);
        }
      });

      it('finds every label the html asks for in its message catalog', function () {
        const catalog = JSON.parse(readFileSync(join(dirname(js), 'locales', 'en-US', `${set.replace('channel-sessions-', '')}.json`), 'utf8'));
        const text = readFileSync(html, 'utf8');
        const keys = new Set<string>();
        for (const m of text.matchAll(/\b_\('([^']+)'/g)) keys.add(m[1]);
        for (const m of text.matchAll(/data-i18n="(?:\[[a-z]+\])?([^"]+)"/g)) keys.add(m[1]);
        should(keys.size).be.above(0);
        const missing = [...keys].filter((k) => !k.includes(':') && typeof k.split('.').reduce((o: any, p) => o?.[p], catalog) !== 'string');
        should(missing).eql([]);
      });
    });
  }

  it('the edit dialogs refuse the property values the runtime refuses, and accept good ones', function () {
    const editor = new Map<string, EditorDefinition>();
    for (const file of Object.values(pkg['node-red'].nodes as Record<string, string>)) {
      for (const [type, def] of runEditorScripts(join(REPO_ROOT, file.replace(/\.js$/, '.html'))).types) editor.set(type, def);
    }
    const cases: Array<[string, string, unknown, boolean]> = [
      ['input-task', 'resultVariable', 'name', true], ['input-task', 'resultVariable', '{name}', false], ['input-task', 'resultVariable', '', false],
      ['input-task', 'timeout', 5, true], ['input-task', 'timeout', -1, false],
      ['output-task', 'attachments', 'ref-session:files', true], ['output-task', 'attachments', 'report.pdf', false],
      ['teamchat-block-message', 'blocks', '[{"type":"divider"}]', true], ['teamchat-block-message', 'blocks', '[{"type": ', false],
      ['teamchat-start', 'suggestedPrompts', [{ title: 'Summarise', message: 'Summarise this channel' }], true],
      ['teamchat-start', 'suggestedPrompts', Array.from({ length: 5 }, (_, i) => ({ title: `t${i}`, message: `m${i}` })), false],
      ['teamchat-start', 'suggestedPrompts', [{ title: 'No message', message: '' }], false],
      ['teamchat-status', 'loadingMessages', 'Reading\nWriting', true], ['teamchat-status', 'loadingMessages', Array.from({ length: 11 }, (_, i) => `step ${i}`).join('\n'), false],
      ['teamchat-environment', 'defaultChannel', '#ops', true], ['teamchat-environment', 'defaultChannel', 'two words', false],
      ['telco-voice-play', 'mediaUrl', 'https://cdn.example.com/a.mp3', true], ['telco-voice-play', 'mediaUrl', 'ftp://cdn.example.com/a.mp3', false],
      ['telco-voice-record', 'maxLength', 3600, true], ['telco-voice-record', 'maxLength', 3601, false],
      ['telco-voice-dial', 'destination', '+14155550100', true], ['telco-voice-dial', 'destination', '555', false],
      ['telco-voice-agent', 'url', '', true], ['telco-voice-agent', 'url', 'wss://agent.example.com/ws', true], ['telco-voice-agent', 'url', 'https://agent.example.com', false],
      ['telco-voice-agent', 'resultVariable', 'agent', true], ['telco-voice-agent', 'resultVariable', '{agent}', false],
      ['telco-voice-agent', 'interruptible', 'speech', true], ['telco-voice-agent', 'interruptible', 'sometimes', false],
      ['telco-voice-agent', 'parameters', [{ name: 'tier', value: '{call.from}' }], true], ['telco-voice-agent', 'parameters', [{ name: 'two words', value: '' }], false],
      // More attributes: letters and digits, once, none the Task sets from a property (in any case), as the runtime refuses them.
      ['telco-voice-agent', 'attributes', [{ name: 'applicationReconnect', value: 'true' }, { name: 'hints', value: '{call.from}' }], true],
      ['telco-voice-agent', 'attributes', [{ name: 'speech-model', value: 'x' }], false],
      ['telco-voice-agent', 'attributes', [{ name: 'Voice', value: 'x' }], false],
      ['telco-voice-agent', 'attributes', [{ name: 'hints', value: 'a' }, { name: 'HINTS', value: 'b' }], false],
      ['telco-messenger-buttons', 'contentSid', `HX${'0'.repeat(32)}`, true], ['telco-messenger-buttons', 'contentSid', 'HX123', false],
      ['telco-messaging-environment', 'messagingServiceSid', `MG${'a'.repeat(32)}`, true], ['telco-messaging-environment', 'messagingServiceSid', 'MG1', false],
      ['telco-voice-environment', 'maxSessions', 10, true], ['telco-voice-environment', 'maxSessions', 'ten', false],
      // As the Slack Environment's: a whole number of 0 or more (0 or empty: no limit).
      ['telco-voice-environment', 'maxSessions', '', true], ['telco-voice-environment', 'maxSessions', -3, false], ['telco-voice-environment', 'maxSessions', 1.5, false],
      ['telco-messaging-environment', 'maxSessions', 0, true], ['telco-messaging-environment', 'maxSessions', -3, false], ['telco-messaging-environment', 'maxSessions', 1.5, false],
      ['telco-voice-environment', 'callerId', '+14155550100', true], ['telco-voice-environment', 'callerId', '4155550100', false],
      ['telco-voice-environment', 'callsPerSecond', 50, true], ['telco-voice-environment', 'callsPerSecond', 0, false],
      ['telco-call-out', 'to', 'to', true], ['telco-call-out', 'to', '', false],
      ['telco-call-out', 'ringTimeout', 30, true], ['telco-call-out', 'ringTimeout', 4, false],
      // Left empty, the runtime rings for its default (30 s).
      ['telco-call-out', 'ringTimeout', '', true],
      ['telco-call-out', 'machineDetection', 'DetectMessageEnd', true], ['telco-call-out', 'machineDetection', 'Always', false],
    ];
    // Text out's typed-in To: E.164 after any whatsapp: prefix, short numbers included, as the runtime's isNumberAddress.
    const to = editor.get('telco-message-out')!.defaults!.to;
    for (const [value, valid] of [['+4411', true], ['whatsapp:+15550001', true], ['4155550100', false], ['+1 415 555 0100', false]] as const) {
      should(to.validate!.call({ toType: 'str' }, value)).equal(valid, `telco-message-out.to = ${value}`);
    }
    for (const [type, property, value, valid] of cases) {
      const defaults = editor.get(type)!.defaults!;
      const node = { ...Object.fromEntries(Object.entries(defaults).map(([k, d]) => [k, d.value])), [property]: value };
      should(defaults[property].validate!.call(node, value)).equal(valid, `${type}.${property} = ${JSON.stringify(value)}`);
    }
  });

  it('registers the sidebar plugin in the editor and the runtime', function () {
    const [id, file] = Object.entries(pkg['node-red'].plugins as Record<string, string>)[0];
    const { plugins } = runEditorScripts(join(REPO_ROOT, file.replace(/\.js$/, '.html')));
    should(plugins.get(id)).have.property('type', id);
    const registered: string[] = [];
    require(join(REPO_ROOT, file))({ plugins: { registerPlugin: (name: string) => registered.push(name) } });
    should(registered).eql([id]);
  });
});
