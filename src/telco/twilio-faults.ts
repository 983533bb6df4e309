import { API_ANSWER_MAX_BYTES, megabytesText } from '../http/http-request';
import { attemptsText, ProviderFault, secondsText } from '../http/provider-fault';

/**
 * Why a Twilio REST call failed after the retries of TwilioHttpClient. Each says what happened in
 * words a flow author can act on; `describe(what)` names the call ("the message to +1555…") for the
 * 4001 a Task takes. A refusal (a 4xx other than 429) is not one of these: it stays twilio's own
 * RestException, worded by the module as "Twilio rejected …".
 */
export abstract class TwilioFault extends ProviderFault {}

/** Twilio answered 429 or 5xx on every attempt, or asked (Retry-After) to wait longer than a call may. */
export class TwilioUnavailable extends TwilioFault {
  constructor(
    readonly status: number,
    /** Twilio's error code from the answer's body, when it had one. */
    readonly twilioCode: number | undefined,
    readonly reason: string,
    attempts: number,
    /** Seconds Twilio asked to wait when that was over the cap, so no further attempt was made. */
    readonly waitAsked?: { seconds: number; capSeconds: number },
  ) {
    super(attempts);
    this.message = this.describe('the request');
  }

  describe(what: string): string {
    const code = this.twilioCode ? `Twilio error ${this.twilioCode}, ` : '';
    const tail = this.waitAsked
      ? `Twilio asked to wait ${this.waitAsked.seconds} s, longer than the ${this.waitAsked.capSeconds} s a call may wait`
      : `${attemptsText(this.attempts)}`;
    return `Twilio did not take ${what}: ${this.reason} (${code}HTTP ${this.status}); ${tail}`;
  }
}

/** No answer at all: the connection was refused, reset or lost before Twilio answered, on every attempt. */
export class TwilioUnreachable extends TwilioFault {
  constructor(
    readonly reason: string,
    readonly code: string | undefined,
    attempts: number,
  ) {
    super(attempts);
    this.message = this.describe('the request');
  }

  describe(what: string): string {
    return `Twilio could not be reached for ${what}: ${this.reason}${this.code ? ` (${this.code})` : ''}; ${attemptsText(this.attempts)}`;
  }
}

/**
 * The connection failed once the request may have gone out (a reset, "socket hang up", a broken
 * pipe), for a request sent at most once (TwilioClientOptions.retryUnsentOnly): Twilio may have taken
 * it, so it is not sent again.
 */
export class TwilioConnectionLost extends TwilioUnreachable {
  override describe(what: string): string {
    return `the connection to Twilio failed after ${what} may have been sent: ${this.reason}${this.code ? ` (${this.code})` : ''}; it was not sent again, as Twilio may have taken it`;
  }
}

/**
 * The request went out and no answer came within the timeout. Twilio may have taken it (a
 * message may be on its way), so it is never sent again: a second copy could reach the user.
 */
export class TwilioTimeout extends TwilioFault {
  constructor(readonly timeoutMs: number) {
    super(1);
    this.message = this.describe('the request');
  }

  describe(what: string): string {
    return `Twilio did not answer within ${secondsText(this.timeoutMs)} s for ${what}; it was not sent again, as Twilio may have taken it`;
  }
}

/** Twilio began to answer (so it has the request) and the answer broke off. Never sent again. */
export class TwilioAnswerCutOff extends TwilioFault {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    attempts: number,
  ) {
    super(attempts);
    this.message = this.describe('the request');
  }

  describe(what: string): string {
    return `Twilio answered HTTP ${this.status} for ${what}, but the answer was cut off${this.code ? ` (${this.code})` : ''}; it was not sent again, as Twilio may have taken it`;
  }
}

/**
 * The answer ran past the most an API answer may be (API_ANSWER_MAX_BYTES) and was closed unread:
 * no Twilio answer is that long, so it comes from what answers at `apiUrl`. Like an answer cut off,
 * the request was taken and is never sent again.
 */
export class TwilioAnswerTooLarge extends TwilioAnswerCutOff {
  constructor(status: number, attempts: number) {
    super(status, undefined, attempts);
    this.message = this.describe('the request');
  }

  override describe(what: string): string {
    return `Twilio answered HTTP ${this.status} for ${what} with more than the ${megabytesText(API_ANSWER_MAX_BYTES)} an API answer may have, so it was not read; it was not sent again, as Twilio may have taken it`;
  }
}
