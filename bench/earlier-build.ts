import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../test/harness/node-red';

/** The package as built at another commit, in a folder of its own, to be linked into a runtime's user dir. */
export interface EarlierBuild {
  ref: string;
  commit: string;
  /** The package folder (its dist/, package.json, redis-context.js): a `packageDir` for NodeRed.start. */
  dir: string;
  remove(): void;
}

/**
 * Builds `ref` of this repository into a temporary folder: the commit's files as `git archive`
 * gives them (no worktree, nothing in this checkout changes), this checkout's node_modules linked
 * beside them, then the commit's own `scripts/build.mjs`. Only the package differs between the
 * two sides of a comparison: the benchmark's code and its fakes are this checkout's.
 */
export function buildEarlier(ref: string): EarlierBuild {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), `cs-bench-${commit.slice(0, 8)}-`));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    process.stdout.write(`… building ${ref} (${commit.slice(0, 10)}) in ${dir}\n`);
    const archive = execFileSync('git', ['archive', '--format=tar', commit], { cwd: REPO_ROOT, maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    execFileSync(process.execPath, [join(dir, 'scripts', 'build.mjs')], { cwd: dir, stdio: 'inherit' });
  } catch (err) {
    remove();
    throw err;
  }
  return { ref, commit, dir, remove };
}
