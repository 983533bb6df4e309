import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { REPO_ROOT } from '../harness/node-red';

type FlowNode = Record<string, any> & { id: string; type: string };

const EXAMPLES = readdirSync(join(REPO_ROOT, 'examples')).filter((f) => f.endsWith('.json'));
const catalogs: Record<string, any> = Object.assign(
  {},
  ...readdirSync(join(REPO_ROOT, 'locales/en-US'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(REPO_ROOT, 'locales/en-US', f), 'utf8'))),
);
/** The widest canvas a laptop shows at 100 % beside the palette and the sidebar, with room to spare. */
const MAX_RIGHT = 1600;

/** As the editor shortens a text it shows as a label (resources: `short(text, 30)`). */
const short = (text: unknown) => (typeof text === 'string' && text ? (text.length > 30 ? `${text.slice(0, 30)}…` : text) : '');

/** A node's canvas label as the package's label functions give it (near enough for widths). */
function labelOf(n: FlowNode, all: FlowNode[]): string {
  if (n.name) return String(n.name);
  const palette = catalogs[n.type]?.paletteLabel ?? n.type;
  if (/-start$/.test(n.type) && n.type !== 'session-start') {
    const env = all.find((e) => e.id === n.environment);
    return env ? `${palette}: ${env.name}` : palette;
  }
  return short(n.text) || short(n.prompt) || short(n.previewText) || short(n.notificationText) || palette;
}

/**
 * A node's box on the canvas, centred on x/y as the editor draws it: 100 px wide at least, else its
 * label (about 7.5 px a character at the editor's 14 px font) plus icon and padding, rounded up to
 * the 20 px grid; 30 px high, or 15 px per output when it has more than two.
 */
function boxOf(n: FlowNode, all: FlowNode[]) {
  const w = Math.max(100, 20 * Math.ceil((labelOf(n, all).length * 7.5 + 50) / 20));
  const h = Math.max(30, (n.wires?.length ?? 0) * 15);
  return { id: n.id, label: labelOf(n, all), left: n.x - w / 2, right: n.x + w / 2, top: n.y - h / 2, bottom: n.y + h / 2 };
}

/** Starts say which Environment they serve and what it lacks, under the node. */
const STARTS = ['teamchat-start', 'telco-call-start', 'telco-sms-start', 'telco-messenger-start'];
/** Nodes that show nothing under them: everything else shows "N waiting" while Sessions wait there, or its outcome. */
const SILENT = ['comment', 'inject', 'switch', 'change', 'function', 'debug', 'end-task', 'session-start', 'tab'];
/** What each kind of Environment in an example lacks, as its starts' status says it (examples carry no secrets). */
const LACKING: Record<string, Array<[string, string]>> = {
  'teamchat-environment': [
    ['botToken', 'Bot Token'],
    ['signingSecret', 'Signing Secret'],
  ],
  'telco-voice-environment': [
    ['accountSid', 'Account SID'],
    ['authToken', 'Auth Token'],
  ],
  'telco-messaging-environment': [
    ['accountSid', 'Account SID'],
    ['authToken', 'Auth Token'],
  ],
};

/** The status a node shows under it once deployed from the example as it is (the longest it would say), or none. */
function statusOf(n: FlowNode, all: FlowNode[]): string | undefined {
  if (SILENT.includes(n.type)) return undefined;
  if (!STARTS.includes(n.type)) return '1 waiting';
  const env = all.find((e) => e.id === n.environment);
  if (!env) return undefined;
  const missing = (LACKING[env.type] ?? []).filter(([key]) => !env.credentials?.[key]).map(([, field]) => field);
  return `serves ${env.name}${missing.length ? ` · missing ${missing.join(', ')}` : ''}`;
}

/**
 * Where a status is drawn: from the node's left edge, 3 px below it, a dot and the text at the
 * editor's 9 pt (about 6 px a character), 15 px high.
 */
function statusBoxOf(n: FlowNode, all: FlowNode[]) {
  const text = statusOf(n, all);
  if (!text) return undefined;
  const box = boxOf(n, all);
  return { id: n.id, text, left: box.left, right: box.left + 20 + text.length * 6, top: box.bottom + 3, bottom: box.bottom + 18 };
}

type Box = { left: number; right: number; top: number; bottom: number };
/** Two boxes closer than `gap` px, so that neither the eye nor a click takes one for the other. */
const near = (a: Box, b: Box, gap: number) => a.left < b.right + gap && b.left < a.right + gap && a.top < b.bottom + gap && b.top < a.bottom + gap;

/**
 * The examples read well on a laptop: no node drawn over another or over another's status, none
 * cut at the canvas's left edge (comments by the width of their text), none past 1,600 px.
 */
describe('the examples on the canvas', function () {
  for (const file of EXAMPLES) {
    const flow = JSON.parse(readFileSync(join(REPO_ROOT, 'examples', file), 'utf8')) as FlowNode[];
    const onCanvas = flow.filter((n) => typeof n.x === 'number' && typeof n.y === 'number');
    const boxes = onCanvas.map((n) => boxOf(n, flow));

    it(`${file}: every node and comment starts 20 px at least from the canvas's left edge`, function () {
      const cut = boxes.filter((b) => b.left < 20).map((b) => `"${b.label}" (${b.id}) begins at ${b.left}`);
      should(cut).eql([]);
    });

    it(`${file}: no status drawn under a node runs into another node or status`, function () {
      const statuses = onCanvas.map((n) => statusBoxOf(n, flow)).filter((s) => s !== undefined);
      const hit: string[] = [];
      for (const status of statuses) {
        for (const box of boxes) {
          if (box.id !== status.id && near(status, box, 5)) hit.push(`"${status.text}" of ${status.id} runs into "${box.label}" (${box.id})`);
        }
        for (const other of statuses) {
          if (other.id > status.id && near(status, other, 5)) hit.push(`"${status.text}" of ${status.id} runs into "${other.text}" of ${other.id}`);
        }
      }
      should(hit).eql([]);
    });

    it(`${file}: no two nodes overlap`, function () {
      const overlaps: string[] = [];
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, b] = [boxes[i], boxes[j]];
          if (near(a, b, 10)) {
            overlaps.push(`"${a.label}" (${a.id}) and "${b.label}" (${b.id})`);
          }
        }
      }
      should(overlaps).eql([]);
    });

    it(`${file}: fits within ${MAX_RIGHT} px`, function () {
      const past = boxes.filter((b) => b.right > MAX_RIGHT).map((b) => `"${b.label}" ends at ${b.right}`);
      should(past).eql([]);
    });
  }
});
