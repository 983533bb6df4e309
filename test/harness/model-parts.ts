/**
 * The body of a function node standing in for a language model: it sends its answer in parts, one
 * every `delayMs`, `msg.partial` true on all but the last, as a flow feeding Stream reply does.
 * `parts`: JavaScript that makes the array of parts (it may read `msg`).
 */
export function modelInParts(parts: string, delayMs: number): string {
  return `const parts = ${parts};
let i = 0;
const tick = () => {
  const m = RED.util.cloneMessage(msg);
  m.payload = parts[i];
  m.partial = i < parts.length - 1;
  node.send(m);
  i++;
  if (i < parts.length) setTimeout(tick, ${delayMs});
  else node.done();
};
tick();
return null;`;
}
