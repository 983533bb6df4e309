import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import should from 'should';
import { NODE_RED_DIR, REPO_ROOT } from '../harness/node-red';

/**
 * What the Flow Library's scorecard (`node-red-dev validate`) and the npm page read from the
 * package, checked offline: node definitions its scanner can read, an example for every node, one
 * word per node in the texts, and README pictures that resolve outside the repository.
 */
// node-red-dev parses the node html with acorn; Node-RED's own nodes depend on the same parser.

const acorn = require(require.resolve('acorn', { paths: [NODE_RED_DIR] }));

const walk = require(require.resolve('acorn-walk', { paths: [NODE_RED_DIR] }));

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
const LITERAL_PROPERTIES = ['icon', 'color', 'inputs', 'outputs', 'category'];
const INLINE_OBJECTS = ['defaults', 'credentials'];
/** Kept only so that old flows load and say what replaces it: no example uses it, and the scanner does not see it. */
const RETIRED = 'teamchat-post-message';

interface Definition {
  type: string;
  category?: string;
  problems: string[];
}

/** Each RED.nodes.registerType(...) of a node set's html, read the way node-red-dev's scanner reads it. */
function definitions(htmlFile: string): Definition[] {
  const html = readFileSync(htmlFile, 'utf8');
  const scripts = [...html.matchAll(/<script.+?type=['"]text\/javascript['"].*?>([\S\s]*?)<\/script>/gi)].map((m) => m[1]);
  const found: Definition[] = [];
  for (const script of scripts) {
    walk.simple(acorn.parse(script, { ecmaVersion: 'latest' }), {
      CallExpression(node: any) {
        if (node.callee.property?.name !== 'registerType') return;
        const [typeNode, defNode] = node.arguments;
        const def: Definition = { type: typeNode.type === 'Literal' ? typeNode.value : `<${typeNode.type}>`, problems: [] };
        if (typeNode.type !== 'Literal') def.problems.push('the type is not a literal');
        if (defNode.type !== 'ObjectExpression') def.problems.push('the definition is not an object literal');
        for (const property of defNode.properties ?? []) {
          const key = property.key?.name;
          if (!key) def.problems.push(`${property.type} in the definition`);
          else if (LITERAL_PROPERTIES.includes(key) && property.value.type !== 'Literal') def.problems.push(`${key} is not a literal`);
          else if (INLINE_OBJECTS.includes(key) && property.value.type !== 'ObjectExpression') def.problems.push(`${key} is not inline`);
          if (key === 'category' && property.value.type === 'Literal') def.category = property.value.value;
        }
        found.push(def);
      },
    });
  }
  return found;
}

const nodeSetHtml = Object.values<string>(pkg['node-red'].nodes).map((js) => join(REPO_ROOT, 'nodes', js.split('/').pop()!.replace(/\.js$/, '.html')));

/** Node-RED 5.0's own Node.js minimum (its package.json engines), read from CI's copy when there. */
function nodeRed5Minimum(): string {
  const ci = join(REPO_ROOT, '.ci/nr5/node_modules/node-red/package.json');
  const engines = existsSync(ci) ? String(JSON.parse(readFileSync(ci, 'utf8')).engines.node) : '>=22.9';
  return engines.replace(/^>=\s*/, '');
}

const versionParts = (v: string) => v.split('.').map((n) => Number(n) || 0);

describe('what the Flow Library and npm read', function () {
  it('asks for no newer Node.js than Node-RED 5.0 does (check P07), and at most 6 runtime dependencies (check D01)', function () {
    const ours = versionParts(String(pkg.engines.node).replace(/^>=\s*/, ''));
    const theirs = versionParts(nodeRed5Minimum());
    const above = ours.findIndex((n, i) => n !== (theirs[i] ?? 0));
    should(above === -1 || ours[above] < (theirs[above] ?? 0)).be.true(`engines.node ${pkg.engines.node} is above Node-RED 5.0's ${nodeRed5Minimum()}`);
    should(Object.keys(pkg.dependencies).length).be.belowOrEqual(6);
  });

  it("finds every node definition with literal properties, as node-red-dev's scanner needs", function () {
    const all = nodeSetHtml.flatMap(definitions);
    should(all.length).be.above(10);
    should(all.filter((d) => d.problems.length).map((d) => `${d.type}: ${d.problems.join(', ')}`)).eql([]);
  });

  it('uses every node type the scanner finds in an example (check N02), and keeps the retired one for the editor alone', function () {
    const types = nodeSetHtml
      .flatMap(definitions)
      .filter((d) => d.category !== 'config')
      .map((d) => d.type);
    const used = new Set(
      readdirSync(join(REPO_ROOT, 'examples'))
        .filter((f) => f.endsWith('.json'))
        .flatMap((f) => (JSON.parse(readFileSync(join(REPO_ROOT, 'examples', f), 'utf8')) as Array<{ type: string }>).map((n) => n.type)),
    );
    should(types.filter((t) => !used.has(t))).eql([]);
    should(used.has(RETIRED)).be.false();
    // The editor runs every script of the html, typed or not: the retired node still loads old flows.
    const all = nodeSetHtml.map((f) => readFileSync(f, 'utf8')).join('\n');
    should(all).match(new RegExp(`<script>\\s*\\(function \\(\\) \\{\\s*//[^\\n]*\\n\\s*RED\\.nodes\\.registerType\\('${RETIRED}'`));
  });

  it('names the WhatsApp start one way in the README, the examples and the help', function () {
    const texts = [
      'README.md',
      'docs/reference.md',
      ...readdirSync(join(REPO_ROOT, 'locales/en-US')).map((f) => `locales/en-US/${f}`),
      ...readdirSync(join(REPO_ROOT, 'examples')).map((f) => `examples/${f}`),
    ];
    const found = texts.filter((f) => /messenger\s+start/i.test(readFileSync(join(REPO_ROOT, f), 'utf8')));
    should(found).eql([]);
  });

  it('shows README pictures by relative path, so a clone read offline shows them, and links only to files that exist', function () {
    // npm's page resolves relative links against the repository package.json names.
    should(String(pkg.repository.url)).match(/github\.com\/[^/]+\/[^/.]+/);
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    should(images.length).be.above(3);
    for (const image of images) {
      should(image.startsWith('docs/images/')).be.true(`${image} is not under docs/images/`);
      should(existsSync(join(REPO_ROOT, image))).be.true(`${image} names no file in the repository`);
    }
    const files = [...readme.matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)].map((m) => m[1]).filter((t) => !/^(https?:|mailto:)/.test(t));
    for (const file of files) should(existsSync(join(REPO_ROOT, file))).be.true(`${file} names no file in the repository`);
  });
});
