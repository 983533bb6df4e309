import type { RED, RedNode } from '../../model/red';
import { runtimeText } from '../../model/texts';

/**
 * The retired TeamChatPostMessage: it stays registered only so old flows load and say what to do.
 * It never posts.
 */
export function retiredPostMessage(red: RED, node: RedNode): void {
  const advice = runtimeText(red, 'teamchat', 'runtime.log.retired');
  node.status({ fill: 'red', shape: 'ring', text: runtimeText(red, 'teamchat', 'runtime.status.retired') });
  node.warn(advice);
  node.on('input', (_msg, _send, done) => done(new Error(advice)));
}
