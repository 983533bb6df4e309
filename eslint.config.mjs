// Lint: typescript-eslint's type-aware rules over the package, its tests, scripts and bench, and the
// recommended rules over the editor-side JavaScript. Formatting is prettier's (npm run format).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// The layers of src/ from the top down (docs/ARCHITECTURE.md, "Layers"): a folder imports only
// from folders on a lower line, never from its own line's other folders nor from above, type
// imports included. The two context store modules at src/'s root are what settings.js requires:
// nothing imports them, and they use the stores and below.
const LAYERS = [['nodes'], ['chat', 'tasks', 'teamchat', 'voice', 'messaging'], ['telco'], ['kit'], ['engine'], ['stores'], ['http', 'files'], ['model']];
const ENTRY_POINTS = ['sqlite-context', 'redis-context'];
// Imports that cross a line on purpose, each with why.
const ALLOWED_ACROSS = {
  // File downloads and intake fetch through the toolbox's HTTP client, bounded answers and retries.
  files: ['http'],
};
/** What a folder must not import: its own line's other folders, every folder above it, the entry points. */
function above(folder) {
  const line = LAYERS.findIndex((names) => names.includes(folder));
  const allowed = ALLOWED_ACROSS[folder] ?? [];
  return [...LAYERS.slice(0, line + 1).flat(), ...ENTRY_POINTS].filter((name) => name !== folder && !allowed.includes(name));
}
/**
 * One files block per depth under src/<folder>/ (a relative import climbs that many folders to reach
 * src/; five is deeper than any folder today). Only static imports and re-exports are checked.
 */
function layerBlocks() {
  const blocks = [];
  const rule = (files, climb, names) => ({
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^${climb}(${names.join('|')})(/|$)`,
              message: 'Imports point down the layers of docs/ARCHITECTURE.md ("Layers"): move what both sides need down, or hand it in from above.',
            },
          ],
        },
      ],
    },
  });
  for (const folder of LAYERS.flat()) {
    for (let depth = 1; depth <= 5; depth++) {
      blocks.push(rule([`src/${folder}/${'*/'.repeat(depth - 1)}*.ts`], '\\.\\./'.repeat(depth), above(folder)));
    }
  }
  const entryAllowed = ['stores', 'http', 'files', 'model'];
  blocks.push(rule(['src/*.ts'], '\\./', [...LAYERS.flat().filter((name) => !entryAllowed.includes(name)), ...ENTRY_POINTS]));
  return blocks;
}

export default tseslint.config(
  { ignores: ['dist/', '.test-build/', '.node-red/', '.ci/', 'coverage/', 'node_modules/'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './test/tsconfig.json', './bench/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Node-RED's runtime API and the flows' messages are untyped by nature: the package reads
      // them through its own narrow types (src/model/red.ts) and checks values where it matters.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // An async function without await keeps one shape for a seam whose other sides await.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // What a user reads at runtime (log lines, a node's warnings and errors, its status) goes through
    // RED._ (model/texts.ts: runtimeText, or the `say` a Session store is handed), so that a runtime
    // with another language's catalog says it in that language and the English stays in
    // locales/en-US/<set>.json: no English literal is said here. A template may only put the
    // "[channel-sessions] " prefix before a text said that way.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression[callee.property.name=/^(warn|error|info)$/] > Literal:first-child[value=/./]',
          message: "Say a runtime text through RED._ (runtimeText, or a store's say) with its key in locales/en-US/<set>.json, not as a literal.",
        },
        {
          selector:
            'CallExpression[callee.property.name=/^(warn|error|info)$/] > TemplateLiteral:first-child:has(> TemplateElement[value.raw!=/^(\\[channel-sessions\\] )?$/])',
          message: 'Say a runtime text through RED._ (runtimeText, or a store\'s say); a template may only add the "[channel-sessions] " prefix.',
        },
        {
          selector:
            "CallExpression[callee.property.name='status'] > ObjectExpression:first-child > Property[key.name='text'] > :matches(Literal, TemplateLiteral).value",
          message: "Say a node status's text through RED._ (runtimeText) with its key under runtime.status in locales/en-US/<set>.json.",
        },
      ],
    },
  },
  {
    // Tests and the bench load the built package from dist/ with require, as Node-RED does.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  ...layerBlocks(),
  {
    files: ['scripts/**/*.mjs', '*.js', '.mocharc.cjs', 'test/**/*.js', 'eslint.config.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['resources/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'script', globals: { ...globals.browser, RED: 'readonly', $: 'readonly', jQuery: 'readonly' } },
  },
);
