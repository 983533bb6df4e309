import { runtimeText, type Speaker } from '../model/texts';

/**
 * Refused webhooks (bad signatures, 4020) are logged at most once a minute per Environment and
 * reason, so a flood of forged requests cannot fill the log; repeats are counted and reported
 * with the next line.
 */
export class RefusalLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    /** The runtime whose language says how many were left out. */
    private readonly red: Speaker,
    private readonly everyMs = 60 * 1000,
    private readonly max = 1000,
  ) {}

  report(key: string, write: (line: string) => void, line: string): void {
    const now = Date.now();
    const entry = this.last.get(key);
    if (entry && now - entry.at < this.everyMs) {
      entry.suppressed += 1;
      return;
    }
    const repeats = entry?.suppressed ? ` ${runtimeText(this.red, 'core', 'runtime.log.refusalRepeats', { count: entry.suppressed })}` : '';
    this.last.delete(key);
    this.last.set(key, { at: now, suppressed: 0 });
    // Keys come from Environments and fixed reasons, but stay bounded whatever a caller passes.
    if (this.last.size > this.max) this.last.delete(this.last.keys().next().value as string);
    write(line + repeats);
  }
}
