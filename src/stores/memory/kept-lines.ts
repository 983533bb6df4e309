/**
 * One kind of a Session's lines kept apart from its record in memory (its history, its log): the
 * last `limit` of them as text, and the number of the last, so a commit tried again appends none
 * twice. Bounded: a Session keeps at most `limit`, and is dropped with its Session.
 */
export class KeptLines {
  private readonly bySession = new Map<string, { last: number; lines: string[] }>();

  constructor(private readonly limit: number) {}

  read<T>(sessionId: string): T[] {
    return (this.bySession.get(sessionId)?.lines ?? []).map((line) => JSON.parse(line) as T);
  }

  /** The step's numbered lines, those not kept yet; whether any was added. */
  append(sessionId: string, numbered: Array<{ n: number; line: unknown }>): boolean {
    if (!numbered.length) return false;
    let kept = this.bySession.get(sessionId);
    if (!kept) this.bySession.set(sessionId, (kept = { last: 0, lines: [] }));
    let added = false;
    for (const { n, line } of numbered) {
      if (n <= kept.last) continue;
      kept.lines.push(JSON.stringify(line));
      kept.last = n;
      added = true;
    }
    if (kept.lines.length > this.limit) kept.lines.splice(0, kept.lines.length - this.limit);
    return added;
  }

  /** A restored Session's lines, the last of them numbered `last`. */
  restore(sessionId: string, last: number, lines: unknown[]): void {
    this.bySession.set(sessionId, { last, lines: lines.slice(-this.limit).map((line) => JSON.stringify(line)) });
  }

  delete(sessionId: string): void {
    this.bySession.delete(sessionId);
  }
}
