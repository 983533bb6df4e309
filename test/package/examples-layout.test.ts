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
  // An inject that repeats says so after its name.
  if (n.type === 'inject' && n.name) return `${n.name}${Number(n.repeat) || n.crontab ? ' ↻' : n.once ? ' ¹' : ''}`;
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
 * the 20 px grid; 30 px high, or 15 px per output when it has more than two. An inject's button
 * sticks out 25 px on its left, a debug node's on its right (no port is on that side).
 */
function boxOf(n: FlowNode, all: FlowNode[]) {
  const w = Math.max(100, 20 * Math.ceil((labelOf(n, all).length * 7.5 + 50) / 20));
  const h = Math.max(30, (n.wires?.length ?? 0) * 15);
  const [buttonLeft, buttonRight] = [n.type === 'inject' ? 25 : 0, n.type === 'debug' ? 25 : 0];
  return { id: n.id, label: labelOf(n, all), left: n.x - w / 2 - buttonLeft, right: n.x + w / 2 + buttonRight, top: n.y - h / 2, bottom: n.y + h / 2 };
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

type Point = [number, number];
/** Node-RED's editor: the width a wire's curve is scaled by, and half a node's height. */
const NODE_WIDTH = 100;
const HALF_HEIGHT = 15;

/** A cubic bezier's points at `steps` even steps of its parameter, its start left out. */
function bezier(p0: Point, p1: Point, p2: Point, p3: Point, steps = 16): Point[] {
  const out: Point[] = [];
  for (let i = 1; i <= steps; i++) {
    const t = i / steps;
    const u = 1 - t;
    const at = (k: 0 | 1) => u * u * u * p0[k] + 3 * u * u * t * p1[k] + 3 * u * t * t * p2[k] + t * t * t * p3[k];
    out.push([at(0), at(1)]);
  }
  return out;
}

/**
 * A wire as Node-RED's editor draws it from an output port at (x1, y1) to an input port at
 * (x2, y2), as a polyline along its beziers: forward, one S-curve; back to a node at about the
 * same height, a loop under both ends (lower when a status is drawn there); back up or down, a
 * curve out of the source, through the midpoint and into the target.
 */
function wirePath(x1: number, y1: number, x2: number, y2: number, hasStatus: boolean): Point[] {
  const dx = x2 - x1;
  const dy = y2 - y1;
  const start: Point = [x1, y1];
  if (dx > 0) {
    const delta = Math.hypot(dx, dy);
    const scale = delta < NODE_WIDTH ? 0.75 - (0.75 * (NODE_WIDTH - delta)) / NODE_WIDTH : 0.75;
    return [start, ...bezier(start, [x1 + NODE_WIDTH * scale, y1], [x2 - NODE_WIDTH * scale, y2], [x2, y2])];
  }
  if (Math.abs(dy) < 10) {
    const bottom = Math.max(y1, y2) + (hasStatus ? 35 : 25);
    const h1 = bottom - y1;
    const h2 = bottom - y2;
    const a: Point = [x1 + 25, y1 + h1 / 2];
    const b: Point = [x1, bottom];
    const c: Point = [x2 - 25, y2 + h2 / 2];
    return [
      start,
      ...bezier(start, [x1 + 15, y1], [x1 + 25, y1 + 5], a),
      ...bezier(a, [x1 + 25, bottom - 5], [x1 + 15, bottom], b),
      ...bezier([x2, bottom], [x2 - 15, bottom], [x2 - 25, bottom - 5], c),
      ...bezier(c, [x2 - 25, y2 + 5], [x2 - 15, y2], [x2, y2]),
    ];
  }
  const scale = 0.4 - 0.2 * (Math.max(0, NODE_WIDTH - Math.min(Math.abs(dx), Math.abs(dy))) / NODE_WIDTH);
  const down = dy > 0;
  const mid: Point = [Math.floor(x2 - dx / 2), Math.floor(y2 - dy / 2)];
  const yc = (y2 + mid[1]) / 2;
  const top: Point = [x1 + NODE_WIDTH * scale, down ? Math.min(yc - dy / 2, y1 + HALF_HEIGHT) : Math.max(yc - dy / 2, y1 - HALF_HEIGHT)];
  const bottom: Point = [x2 - NODE_WIDTH * scale, down ? Math.max(yc, y2 - HALF_HEIGHT) : Math.min(yc, y2 + HALF_HEIGHT)];
  const xh = (x1 + top[0]) / 2;
  const sy = down ? 1 : -1;
  const cp1: Point = [top[0], down ? Math.max(y1, top[1] - HALF_HEIGHT) : Math.min(y1, top[1] + HALF_HEIGHT)];
  const cp2: Point = [xh, down ? Math.min(mid[1], top[1] + HALF_HEIGHT) : Math.max(mid[1], top[1] - HALF_HEIGHT)];
  const cp3: Point = [bottom[0], down ? Math.max(mid[1], bottom[1] - HALF_HEIGHT) : Math.min(mid[1], bottom[1] + HALF_HEIGHT)];
  const cp4: Point = [(x2 + bottom[0]) / 2, y2];
  if (cp2[1] === top[1] + sy * HALF_HEIGHT) {
    if (Math.abs(dy) < HALF_HEIGHT * 10) {
      cp1[1] = top[1] - (sy * HALF_HEIGHT) / 2;
      cp3[1] = bottom[1] - (sy * HALF_HEIGHT) / 2;
    }
    cp2[0] = top[0];
  }
  // Each "S" segment's first control point mirrors the previous segment's second about its start.
  const mirror = (c: Point, about: Point): Point => [2 * about[0] - c[0], 2 * about[1] - c[1]];
  return [
    start,
    ...bezier(start, [xh, y1], cp1, top),
    ...bezier(top, mirror(cp1, top), cp2, mid),
    ...bezier(mid, mirror(cp2, mid), cp3, bottom),
    ...bezier(bottom, mirror(cp3, bottom), cp4, [x2, y2]),
  ];
}

type Wire = { from: FlowNode; port: number; to: FlowNode; path: Point[] };

/** Every wire of a flow, from its output port (13 px apart, centred on the node) to the target's input. */
function wiresOf(onCanvas: FlowNode[], all: FlowNode[]): Wire[] {
  const byId = new Map(onCanvas.map((n) => [n.id, n]));
  const wires: Wire[] = [];
  for (const from of onCanvas) {
    const outputs: string[][] = from.wires ?? [];
    outputs.forEach((targets, port) => {
      for (const id of targets) {
        const to = byId.get(id);
        if (!to) continue;
        const x1 = boxOf(from, all).right;
        const y1 = from.y - ((Math.max(outputs.length, 1) - 1) / 2) * 13 + 13 * port;
        const x2 = boxOf(to, all).left;
        const hasStatus = statusOf(from, all) !== undefined || statusOf(to, all) !== undefined;
        wires.push({ from, port, to, path: wirePath(x1, y1, x2, to.y, hasStatus) });
      }
    });
  }
  return wires;
}

/** Where segments ab and cd cross at a point inside both (touching ends do not count), or undefined. */
function crossingOf(a: Point, b: Point, c: Point, d: Point): Point | undefined {
  const side = (p: Point, q: Point, r: Point) => (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]);
  const d1 = side(c, d, a);
  const d2 = side(c, d, b);
  const d3 = side(a, b, c);
  const d4 = side(a, b, d);
  if (!(((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))) return undefined;
  const t = d1 / (d1 - d2);
  return [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])];
}

const segmentsCross = (a: Point, b: Point, c: Point, d: Point) => crossingOf(a, b, c, d) !== undefined;

/** Every point where two polylines cross. */
function crossingsOf(p: Point[], q: Point[]): Point[] {
  const found: Point[] = [];
  for (let i = 1; i < p.length; i++) {
    for (let j = 1; j < q.length; j++) {
      const x = crossingOf(p[i - 1], p[i], q[j - 1], q[j]);
      if (x) found.push(x);
    }
  }
  return found;
}

/**
 * How far from a node two of its wires may swap over: wires leaving neighbouring ports, or coming
 * into one port from above and below, fan out or merge there, which reads as a fan, not a crossing.
 */
const FAN = 60;

/**
 * Where two wires cross, as the eye sees it: anywhere, but near a node both join, within FAN px of
 * where each meets it. Wires that share a node cross as visibly as any other (a retry's wire out of
 * a node and the wire back into it).
 */
function wiresCross(a: Wire, b: Wire): boolean {
  const endsAt = (w: Wire, id: string): Point[] => [...(w.from.id === id ? [w.path[0]] : []), ...(w.to.id === id ? [w.path[w.path.length - 1]] : [])];
  const shared = [a.from.id, a.to.id].filter((id) => id === b.from.id || id === b.to.id);
  const close = (x: Point, ends: Point[]) => ends.some((e) => Math.hypot(x[0] - e[0], x[1] - e[1]) < FAN);
  return crossingsOf(a.path, b.path).some((x) => !shared.some((id) => close(x, endsAt(a, id)) && close(x, endsAt(b, id))));
}

/** Whether segment ab runs into the box: an end inside it, or across one of its edges. */
function segmentHitsBox(a: Point, b: Point, box: Box): boolean {
  const inside = (p: Point) => p[0] > box.left && p[0] < box.right && p[1] > box.top && p[1] < box.bottom;
  if (inside(a) || inside(b)) return true;
  const corners: Point[] = [
    [box.left, box.top],
    [box.right, box.top],
    [box.right, box.bottom],
    [box.left, box.bottom],
  ];
  return corners.some((c, i) => segmentsCross(a, b, c, corners[(i + 1) % 4]));
}

const nameOf = (w: Wire) => `"${w.from.name || w.from.id}" (output ${w.port + 1}) to "${w.to.name || w.to.id}"`;

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

    it(`${file}: no two wires cross`, function () {
      const wires = wiresOf(onCanvas, flow);
      const crossings: string[] = [];
      for (let i = 0; i < wires.length; i++) {
        for (let j = i + 1; j < wires.length; j++) {
          const [a, b] = [wires[i], wires[j]];
          if (wiresCross(a, b)) crossings.push(`${nameOf(a)} crosses ${nameOf(b)}`);
        }
      }
      should(crossings).eql([]);
    });

    it(`${file}: no wire runs under a node or a status it does not join`, function () {
      const under: string[] = [];
      for (const wire of wiresOf(onCanvas, flow)) {
        for (const n of onCanvas) {
          if (n.id === wire.from.id || n.id === wire.to.id) continue;
          const status = statusBoxOf(n, flow);
          for (const [what, box] of [
            [`"${labelOf(n, flow)}"`, boxOf(n, flow)],
            [`the status of "${labelOf(n, flow)}"`, status],
          ] as const) {
            if (box && wire.path.some((p, i) => i > 0 && segmentHitsBox(wire.path[i - 1], p, box))) under.push(`${nameOf(wire)} runs under ${what}`);
          }
        }
      }
      should(under).eql([]);
    });

    it(`${file}: fits within ${MAX_RIGHT} px`, function () {
      const past = boxes.filter((b) => b.right > MAX_RIGHT).map((b) => `"${b.label}" ends at ${b.right}`);
      should(past).eql([]);
    });
  }
});
