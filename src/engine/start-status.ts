import type { RED, RedNode } from '../model/red';
import type { StartRegistration } from './starts';
import { runtimeText } from '../model/texts';

/** A deploy-time outcome shown beside "serves <Environment>" on its starts. */
export interface EnvironmentNote {
  fill: 'green' | 'yellow' | 'red';
  text: string;
}

/**
 * What the canvas shows: on each start, which Environment it serves (and whether another Process
 * also claims it), with the Environment's latest note (auto-deploy, store faults); on each node
 * that Sessions wait at, how many wait there.
 */
export class StartStatus {
  private processOrder = new Map<string, number>();
  private processNames = new Map<string, string>();
  private readonly notes = new Map<string, EnvironmentNote>();
  /** Per Environment, what it lacks (credentials), kept apart from `notes`, which later outcomes replace. */
  private readonly missing = new Map<string, string>();
  private waitingShown = new Map<string, number>();

  constructor(private readonly red: RED) {}

  /** After a deploy: the order and names of the flow tabs, which decide which Process serves. */
  readFlows(): Set<string> {
    this.processOrder = new Map();
    this.processNames = new Map();
    const ids = new Set<string>();
    let index = 0;
    this.red.nodes.eachNode((n) => {
      ids.add(n.id);
      if (n.type === 'tab') {
        this.processOrder.set(n.id, index++);
        this.processNames.set(n.id, String(n.label ?? n.id));
      }
    });
    return ids;
  }

  orderOf(processId: string): number {
    return this.processOrder.get(processId) ?? Number.MAX_SAFE_INTEGER;
  }

  note(environmentId: string, note: EnvironmentNote | undefined): void {
    if (note) this.notes.set(environmentId, note);
    else this.notes.delete(environmentId);
  }

  lacks(environmentId: string, missing: string | undefined): void {
    if (missing) this.missing.set(environmentId, missing);
    else this.missing.delete(environmentId);
  }

  noteOf(environmentId: string): EnvironmentNote | undefined {
    return this.notes.get(environmentId);
  }

  /** The Environment's note with what it lacks before it: yellow at least while something is missing. */
  private combinedNote(envId: string): EnvironmentNote | undefined {
    const note = this.notes.get(envId);
    const missing = this.missing.get(envId);
    if (!missing) return note;
    return { fill: note?.fill === 'red' ? 'red' : 'yellow', text: note ? `${missing} · ${note.text}` : missing };
  }

  /** Two Processes bound to one Environment and Channel: one serves; both say so. */
  showServing(starts: StartRegistration[], environmentName: (id: string) => string): void {
    const groups = new Map<string, StartRegistration[]>();
    for (const start of starts) {
      // Out nodes serve no inbound event: any number of them may share an Environment.
      if (start.kind.outbound) continue;
      const bindings: string[] = [];
      if (start.kind.channel && start.environment) bindings.push(`${start.environment}|${start.kind.channel}`);
      for (const [moduleKey, env] of Object.entries(start.serves ?? {})) if (env) bindings.push(`${env}|shared:${moduleKey}`);
      for (const binding of bindings) groups.set(binding, [...(groups.get(binding) ?? []), start]);
    }
    for (const [binding, group] of groups) {
      const [envId, channel] = binding.split('|');
      group.sort((a, b) => this.orderOf(a.node.z ?? '') - this.orderOf(b.node.z ?? '') || a.node.id.localeCompare(b.node.id));
      const envName = environmentName(envId);
      const note = this.combinedNote(envId);
      const withNote = (text: string) => (note ? `${text} · ${note.text}` : text);
      if (group.length === 1) {
        group[0].node.status({
          fill: note && note.fill !== 'green' ? note.fill : 'green',
          shape: 'ring',
          text: withNote(runtimeText(this.red, 'core', 'runtime.status.serves', { environment: envName })),
        });
        continue;
      }
      const winner = this.processNames.get(group[0].node.z ?? '') ?? group[0].node.z;
      const others = group.slice(1).map((s) => this.processNames.get(s.node.z ?? '') ?? s.node.z);
      const said = { name: envName, channel, count: group.length, winner, others: others.map((o) => `"${o}"`).join(', ') };
      this.red.log.warn(`[channel-sessions] ${runtimeText(this.red, 'core', 'runtime.log.startsInProcesses', said)}`);
      group[0].node.status({
        fill: note?.fill === 'red' ? 'red' : 'yellow',
        shape: 'dot',
        text: withNote(runtimeText(this.red, 'core', 'runtime.status.servesAlsoBound', { environment: envName, others: others.join(', ') })),
      });
      for (const start of group.slice(1)) {
        start.node.status({
          fill: 'yellow',
          shape: 'ring',
          text: runtimeText(this.red, 'core', 'runtime.status.notServing', { winner, environment: envName }),
        });
      }
    }
  }

  /** "N waiting" on each node Sessions wait at; nodes whose count went to zero are cleared. */
  showWaiting(counts: Map<string, number>, nodeOf: (id: string) => RedNode | undefined): void {
    for (const [id, shown] of this.waitingShown) {
      if (shown && !counts.get(id)) nodeOf(id)?.status({});
    }
    for (const [id, count] of counts) {
      if (count !== this.waitingShown.get(id))
        nodeOf(id)?.status(count ? { fill: 'blue', shape: 'ring', text: runtimeText(this.red, 'core', 'runtime.status.waiting', { count }) } : {});
    }
    this.waitingShown = counts;
  }

  /** A waiting node was (re)deployed: show its count again. */
  forgetShown(nodeId: string): void {
    this.waitingShown.delete(nodeId);
  }
}
