import { API_ANSWER_MAX_BYTES, megabytesText } from '../http/http-request';
import { attemptsText, httpStatusText, ProviderFault, secondsText } from '../http/provider-fault';

/**
 * Why a Slack Web API call failed after the retries of the WebClient's fetch (slack-fetch.ts).
 * Each says what happened in words a flow author can act on; `describe(what)` names the call
 * ("chat.postMessage") for the 4001 a Task takes (slackFailure). Slack's own refusals (`ok:false`)
 * are not these: they stay the WebClient's platform errors.
 */
export abstract class SlackFault extends ProviderFault {}

/** Slack answered 429 or 5xx on every attempt, or asked (Retry-After) to wait longer than a call may. */
export class SlackUnavailable extends SlackFault {
  constructor(
    readonly status: number,
    attempts: number,
    /** Seconds Slack asked to wait when that was over the cap, so no further attempt was made. */
    readonly waitAsked?: { seconds: number; capSeconds: number },
  ) {
    super(attempts);
    this.message = this.describe('the request');
  }

  describe(what: string): string {
    const answer = httpStatusText(this.status);
    if (this.waitAsked) {
      return `${what}: Slack answered ${answer} and asked to wait ${this.waitAsked.seconds} s, longer than the ${this.waitAsked.capSeconds} s a call may wait; not tried again (${attemptsText(this.attempts)})`;
    }
    return `${what}: Slack answered ${answer} after ${attemptsText(this.attempts)}`;
  }
}

/** No answer at all: the connection was refused, reset or lost before Slack answered, on every attempt. */
export class SlackUnreachable extends SlackFault {
  constructor(
    readonly reason: string,
    readonly code: string | undefined,
    attempts: number,
  ) {
    super(attempts);
    this.message = this.describe('the request');
  }

  describe(what: string): string {
    return `${what}: Slack could not be reached: ${this.reason}${this.code ? ` (${this.code})` : ''}; ${attemptsText(this.attempts)}`;
  }
}

/**
 * The request went out and no answer came within the timeout. Slack may have carried it out (the
 * message may be in the channel), so it is never sent again: the person would see it twice.
 */
export class SlackTimeout extends SlackFault {
  constructor(readonly timeoutMs: number) {
    super(1);
    this.message = this.describe('the request');
  }

  describe(what: string): string {
    return `${what}: Slack did not answer within ${secondsText(this.timeoutMs)} s; it was not sent again, as Slack may have carried it out`;
  }
}

/** Slack began to answer (so it has the request) and the answer broke off. Never sent again. */
export class SlackAnswerCutOff extends SlackFault {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    attempts: number,
  ) {
    super(attempts);
    this.message = this.describe('the request');
  }

  describe(what: string): string {
    return `${what}: Slack answered HTTP ${this.status}, but the answer was cut off${this.code ? ` (${this.code})` : ''}; it was not sent again, as Slack may have carried it out`;
  }
}

/**
 * The answer ran past the most an API answer may be (API_ANSWER_MAX_BYTES) and was closed unread:
 * no Slack answer is that long, so it comes from what answers at `apiUrl`. Like an answer cut off,
 * the call was taken and is never sent again.
 */
export class SlackAnswerTooLarge extends SlackAnswerCutOff {
  constructor(status: number, attempts: number) {
    super(status, undefined, attempts);
    this.message = this.describe('the request');
  }

  override describe(what: string): string {
    return `${what}: Slack answered HTTP ${this.status} with more than the ${megabytesText(API_ANSWER_MAX_BYTES)} an API answer may have, so it was not read; it was not sent again, as Slack may have carried it out`;
  }
}
