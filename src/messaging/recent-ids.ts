/**
 * The provider may deliver a webhook again (a timeout on its side); each MessageSid is handled
 * once. Memory stays bounded: the oldest ids are forgotten first.
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly limit = 10000) {}

  /** True when the id was seen before; otherwise remembers it. */
  seen(id: string): boolean {
    if (this.ids.has(id)) return true;
    this.ids.add(id);
    if (this.ids.size > this.limit) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    return false;
  }
}
