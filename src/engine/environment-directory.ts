/**
 * Deployed Environments of one kind, by id and by token (the token in inbound URLs). A redeploy
 * replaces the entry; an unknown token finds nothing, so the route answers 404 and starts nothing.
 */
export class EnvironmentDirectory<T extends { id: string }> {
  private readonly byId = new Map<string, T>();
  private readonly tokens = new Map<string, string>();

  add(env: T, token: string | undefined): void {
    this.byId.set(env.id, env);
    for (const [t, id] of this.tokens) if (id === env.id) this.tokens.delete(t);
    if (token) this.tokens.set(token, env.id);
  }

  remove(env: T): void {
    if (this.byId.get(env.id) !== env) return;
    this.byId.delete(env.id);
    for (const [t, id] of this.tokens) if (id === env.id) this.tokens.delete(t);
  }

  byToken(token: string): T | undefined {
    const id = this.tokens.get(token);
    return id ? this.byId.get(id) : undefined;
  }

  get(id: string): T | undefined {
    return this.byId.get(id);
  }

  all(): T[] {
    return [...this.byId.values()];
  }
}
