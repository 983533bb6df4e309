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

/** The examples read well on a laptop: no node drawn over another, none past 1,600 px. */
describe('the examples on the canvas', function () {
  for (const file of EXAMPLES) {
    const flow = JSON.parse(readFileSync(join(REPO_ROOT, 'examples', file), 'utf8')) as FlowNode[];
    const onCanvas = flow.filter((n) => typeof n.x === 'number' && typeof n.y === 'number');
    const boxes = onCanvas.map((n) => boxOf(n, flow));

    it(`${file}: no two nodes overlap`, function () {
      const overlaps: string[] = [];
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, b] = [boxes[i], boxes[j]];
          // A 10 px gap at least, so that neither the eye nor a click takes one for the other.
          if (a.left < b.right + 10 && b.left < a.right + 10 && a.top < b.bottom + 10 && b.top < a.bottom + 10) {
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
