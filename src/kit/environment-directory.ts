import { FlowsRestart } from './flows-restart';
import type { RED } from '../model/red';

/**
 * Deployed Environments of one kind, by id and by token (the token in inbound URLs). A redeploy
 * replaces the entry; an unknown token finds nothing, so the route answers 404 and starts nothing.
 *
 * Webhook routes look Environments up with `find` / `findById`: while the flows restart (a deploy
 * has closed the config nodes and not yet made the new ones), the lookup waits for them to start,
 * up to FlowsRestart's bound, so a message that arrives mid-deploy is handled instead of refused.
 */
export class EnvironmentDirectory<T extends { id: string }> {
  private readonly byId = new Map<string, T>();
  private readonly tokens = new Map<string, string>();
  /** Environments closed by a deploy still in progress, by id: steps already running finish with them. */
  private readonly leaving = new Map<string, T>();
  private restarts: FlowsRestart | undefined;

  /** Called when the module registers (before the flows first start): lookups then wait out restarts. */
  followDeploys(red: RED): void {
    this.restarts = FlowsRestart.register(red);
  }

  add(env: T, token: string | undefined): void {
    this.forgetLeaving();
    this.leaving.delete(env.id);
    this.byId.set(env.id, env);
    for (const [t, id] of this.tokens) if (id === env.id) this.tokens.delete(t);
    if (token) this.tokens.set(token, env.id);
  }

  remove(env: T): void {
    if (this.byId.get(env.id) !== env) return;
    this.byId.delete(env.id);
    this.forgetLeaving();
    if (this.restarts?.restarting) this.leaving.set(env.id, env);
    for (const [t, id] of this.tokens) if (id === env.id) this.tokens.delete(t);
  }

  byToken(token: string): T | undefined {
    const id = this.tokens.get(token);
    return id ? this.byId.get(id) : undefined;
  }

  /**
   * The deployed Environment with this id. While a deploy replaces it, the one being closed: a
   * Session whose step was running when the deploy began (sending its reply) finishes that step
   * instead of failing with "not deployed" halfway.
   */
  get(id: string): T | undefined {
    const env = this.byId.get(id);
    if (env || !this.leaving.size) return env;
    this.forgetLeaving();
    return this.leaving.get(id);
  }

  /** The Environment of an inbound URL's token, once restarting flows have started. */
  find(token: string): Promise<T | undefined> {
    return this.afterRestart(() => this.byToken(token));
  }

  /** The Environment with this id, once restarting flows have started. */
  findById(id: string): Promise<T | undefined> {
    return this.afterRestart(() => this.byId.get(id));
  }

  all(): T[] {
    return [...this.byId.values()];
  }

  /** Once the flows run again, the closed Environments are gone for good (bounded: one per id at most). */
  private forgetLeaving(): void {
    if (this.leaving.size && !this.restarts?.restarting) this.leaving.clear();
  }

  /**
   * Even a known token waits: mid-deploy, the new config node may exist before the start nodes
   * that serve it, and a message handed over then would find no start.
   */
  private async afterRestart(lookUp: () => T | undefined): Promise<T | undefined> {
    const settled = this.restarts?.settled();
    if (settled) await settled;
    return lookUp();
  }
}
