/** The engine's own kinds of recorded item; a module registers its kinds with `registerInbound`. */
export const TIMEOUT = 'timeout';
export const EXPIRE = 'expire';
export const END = 'end';
export const TEST_START = 'test-start';
export const DIRECT = 'direct';
/** An out node's request: a Session toward a person, opened at that node. */
export const OUT_START = 'out-start';
