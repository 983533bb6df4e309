import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RED, RedNode } from '../model/red';

/**
 * On a Node.js the package does not support, a node set registers each of its node types as a
 * placeholder that only shows a red status naming the Node.js needed and passes nothing on. Were
 * the types missing, Node-RED would wait for them and start no flow at all, not even one without
 * the package's nodes. Config nodes register too (with their credentials, so that a deploy from
 * this Node-RED keeps them).
 *
 * The types are read from the set's own html, which Node-RED serves to the editor as ever: the
 * set's code may not load on this Node.js. Like node-support, this file requires only fs and path.
 */
export function registerPlaceholders(red: RED, set: string, needs: string): void {
  const text = red._('nodeSupport.status', { needs });
  for (const { type, config, credentials } of nodeTypes(readFileSync(join(__dirname, '..', 'nodes', `${set}.html`), 'utf8'))) {
    red.nodes.registerType(
      type,
      function (this: RedNode, settings: object) {
        red.nodes.createNode(this, settings);
        if (!config) this.status({ fill: 'red', shape: 'ring', text });
      },
      credentials ? { credentials } : undefined,
    );
  }
}

interface NodeType {
  type: string;
  config: boolean;
  credentials?: Record<string, { type: string }>;
}

/** Each RED.nodes.registerType('type', { ... }) of a set's html: its type, whether a config node, its credentials. */
export function nodeTypes(html: string): NodeType[] {
  return html
    .split(/RED\.nodes\.registerType\(\s*['"]/)
    .slice(1)
    .map((chunk) => {
      const type = /^[\w-]+/.exec(chunk)?.[0] ?? '';
      const start = chunk.search(/\bcredentials:\s*\{/);
      let credentials: NodeType['credentials'];
      if (start >= 0) {
        const block = balanced(chunk, chunk.indexOf('{', start));
        credentials = {};
        for (const m of block.matchAll(/(\w+):\s*\{\s*type:\s*['"](password|text)['"]/g)) credentials[m[1]] = { type: m[2] };
      }
      return { type, config: /\bcategory:\s*['"]config['"]/.test(chunk.slice(0, chunk.search(/<\/script>|$/))), credentials };
    })
    .filter((t) => t.type !== '');
}

/** The text from the brace at `open` to its matching brace. */
function balanced(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}
