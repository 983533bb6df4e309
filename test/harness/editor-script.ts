import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createContext, runInContext } from 'node:vm';
import { REPO_ROOT } from './node-red';

export interface EditorDefinition {
  category?: string;
  inputs?: number;
  outputs?: number;
  defaults?: Record<string, { value?: unknown; required?: boolean; type?: string; validate?: (this: unknown, v: unknown) => boolean }>;
  credentials?: Record<string, { type: string }>;
  [k: string]: unknown;
}

/**
 * Runs the `<script type="text/javascript">` and untyped `<script>` blocks of a built node-set html the way the editor
 * does at load time (after the shared resources/editor.js it names), against an editor API that
 * records what the scripts register. Only load-time code runs: dialogs and labels need the browser
 * test (editor-browser.test.ts).
 */
export function runEditorScripts(
  htmlFile: string,
  /** The workspace's nodes by id, as `RED.nodes.node(id)` finds them (an Environment a validator reads). */
  workspace: Record<string, Record<string, unknown>> = {},
): { types: Map<string, EditorDefinition>; plugins: Map<string, { type?: string }> } {
  const html = readFileSync(htmlFile, 'utf8');
  const types = new Map<string, EditorDefinition>();
  const plugins = new Map<string, { type?: string }>();
  const RED = {
    nodes: { registerType: (type: string, def: EditorDefinition) => types.set(type, def), getType: () => undefined, node: (id: string) => workspace[id] },
    plugins: { registerPlugin: (id: string, def: { type?: string }) => plugins.set(id, def) },
    // resources/editor.js listens for added nodes (Environments get their token on import).
    events: { on: () => undefined },
    validators: { number: (blankAllowed?: boolean) => (v: unknown) => (blankAllowed && (v === '' || v === undefined)) || !Number.isNaN(Number(v)) },
    settings: { httpNodeRoot: '/' },
    // Node-RED's own check of a msg property expression (`payload`, `a.b[0]`), as far as the dialogs use it.
    utils: { validatePropertyExpression: (v: string) => /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*|\[\d+\])*$/.test(v) },
    _: (key: string) => key,
  };
  // A closed dialog: no field to read a typed input's type from.
  const $ = () => ({ length: 0, val: () => undefined });
  const context = createContext({ RED, $, console });
  runInContext('var window = globalThis;', context);
  for (const src of html.matchAll(/<script src="resources\/@channel-sessions\/node-red\/([^"]+)"><\/script>/g)) {
    runInContext(readFileSync(join(REPO_ROOT, 'resources', src[1]), 'utf8'), context, { filename: `resources/${src[1]}` });
  }
  for (const block of html.matchAll(/<script(?: type="text\/javascript")?>([\s\S]*?)<\/script>/g)) {
    runInContext(block[1], context, { filename: htmlFile });
  }
  return { types, plugins };
}
