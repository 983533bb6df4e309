import type { ChannelName } from '../model/channels';

/** `{call}`, the call start's variable, from the provider's call-started form fields. */
export interface CallVariable {
  from: string;
  to: string;
  callId: string;
  /** `outbound-api` on a call a Call out node placed. */
  direction: 'inbound' | 'outbound' | 'outbound-api';
  callerName: string;
  fromCountry: string;
  channel: ChannelName;
  isTest: boolean;
}

export function callFromWebhook(params: Record<string, string>): CallVariable {
  return {
    from: params.From ?? '',
    to: params.To ?? '',
    callId: params.CallSid ?? '',
    // The provider says inbound, outbound-api or outbound-dial; users see two values.
    direction: (params.Direction ?? 'inbound').startsWith('outbound') ? 'outbound' : 'inbound',
    callerName: params.CallerName ?? '',
    fromCountry: params.FromCountry ?? '',
    channel: 'TelcoVoice',
    isTest: false,
  };
}

/** A sample caller for the test chat when the start's test data names none. */
export const SAMPLE_CALLER = '+15005550006';
export const SAMPLE_CALLED = '+15005550001';
