import { createHash } from 'node:crypto';

/** How many conversations an instance remembers what it wrote of. */
export const KNOWN_LIMIT = 5000;
/** How many characters of texts it keeps in all: a few large records must not hold the memory. */
export const KNOWN_CHARACTERS = 8 * 1024 * 1024;
/** A text longer than this is not kept: bringing it back once costs less than holding it. */
export const KNOWN_TEXT_MAX = 256 * 1024;

/** What one instance last wrote of a conversation: its Session record and its newest item. */
interface Known {
  /** The record text the last commit stored, and its digest (`digestOf`), taken at the first claim that sends it. */
  record?: { text: string; digest?: string };
  /** The item this instance recorded last in the conversation, by its seq. */
  item?: { seq: string; text: string };
}

/**
 * The texts this instance wrote to Redis, kept so that taking a conversation need not bring them
 * back: on one instance the Session record and item a claim reads are the ones it wrote a moment
 * before. They are only ever a hint. The claim script sends a text back unless Redis holds exactly
 * what the hint says (the record's digest, the item's seq, which Redis never gives twice), so a
 * text another instance, an older version or a person changed since always comes back whole.
 *
 * Bounded in conversations and in characters. Past either bound it forgets everything at once:
 * each conversation's next claim then brings its texts back whole, once. Dropping the oldest one
 * at a time instead would walk the empty slots a Map keeps at its front after deletes, on every
 * message of a busy instance (see recent-keys.ts).
 */
export class KnownCopies {
  private byConversation = new Map<string, Known>();
  private characters = 0;

  constructor(
    private readonly limit = KNOWN_LIMIT,
    private readonly characterLimit = KNOWN_CHARACTERS,
  ) {}

  /** What this instance holds of `cid`. */
  get(cid: string): Known | undefined {
    return this.byConversation.get(cid);
  }

  /**
   * The hint for a claim of `cid`: the record with its digest and the item, to be used if Redis
   * says they are current. The digest is taken here, not at each commit: many records are never
   * claimed by the instance that wrote them (a conversation's last step, another instance's turn).
   */
  hint(cid: string): { record?: { text: string; digest: string }; item?: { seq: string; text: string } } {
    const known = this.byConversation.get(cid);
    const record = known?.record;
    return { record: record && { text: record.text, digest: (record.digest ??= digestOf(record.text)) }, item: known?.item };
  }

  recordWritten(cid: string, text: string): void {
    this.forgetRecord(cid);
    if (!this.makeRoom(text)) return;
    this.entry(cid).record = { text };
    this.characters += text.length;
  }

  itemRecorded(cid: string, seq: number, text: string): void {
    const known = this.byConversation.get(cid);
    if (known?.item) {
      this.characters -= known.item.text.length;
      known.item = undefined;
    }
    if (!this.makeRoom(text)) return;
    this.entry(cid).item = { seq: String(seq), text };
    this.characters += text.length;
  }

  /** The conversation's Session ended, or a commit's outcome is unknown: its record is not kept. */
  forgetRecord(cid: string): void {
    const known = this.byConversation.get(cid);
    if (!known?.record) return;
    this.characters -= known.record.text.length;
    known.record = undefined;
  }

  get size(): number {
    return this.byConversation.size;
  }

  /** The characters of the texts kept. */
  get kept(): number {
    return this.characters;
  }

  /** Whether `text` may be kept, after forgetting everything if it would not fit. */
  private makeRoom(text: string): boolean {
    if (text.length > KNOWN_TEXT_MAX) return false;
    if (this.characters + text.length > this.characterLimit) this.forgetAll();
    return true;
  }

  private entry(cid: string): Known {
    let known = this.byConversation.get(cid);
    if (!known) {
      if (this.byConversation.size >= this.limit) this.forgetAll();
      known = {};
      this.byConversation.set(cid, known);
    }
    return known;
  }

  private forgetAll(): void {
    this.byConversation = new Map();
    this.characters = 0;
  }
}

/**
 * The first 16 hex digits of the text's SHA-1, as the claim script computes it from what Redis
 * holds (`redis.sha1hex`): 64 bits, so that two different records share it once in 2^64 tries.
 */
export function digestOf(text: string): string {
  return createHash('sha1').update(text).digest('hex').slice(0, 16);
}
