/** The error codes Tasks and the engine report (`msg.error.code`), listed in the README. */
export const ERROR_NAMES = {
  3005: 'TaskInvalidData',
  4001: 'ModuleException',
  4008: 'ModuleMissingConfiguration',
  4009: 'ModuleInputEmpty',
  4012: 'ModuleInvalidData',
  4020: 'WebhookSignatureInvalid',
  4022: 'ModuleLogWarning',
  4030: 'ConversationBusy',
  8025: 'StartWrongChannel',
  9007: 'PlanStorageLimitReached',
} as const;

export type ErrorCode = keyof typeof ERROR_NAMES;

export interface TaskErrorInfo {
  code: ErrorCode;
  name: string;
  message: string;
}

/** An error a Task or start raises; it travels to the error branch as `msg.error`. */
export class TaskError extends Error {
  readonly code: ErrorCode;
  readonly codeName: string;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
    this.codeName = ERROR_NAMES[code];
    // Node-RED's Debug sidebar shows an Error as `name: message`; this makes it read like the log line.
    this.name = `${code} ${this.codeName}`;
  }

  toInfo(): TaskErrorInfo {
    return { code: this.code, name: this.codeName, message: this.message };
  }

  /** Node-RED prints `err.toString()` in the debug sidebar and log. */
  override toString(): string {
    return `${this.code} ${this.codeName}: ${this.message}`;
  }
}

/** Anything thrown inside a Task becomes a TaskError; unknown failures count as module failures. */
export function asTaskError(err: unknown): TaskError {
  if (err instanceof TaskError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new TaskError(4001, message);
}
