import type { UnusableSetting } from '../kit/environment-warnings';
import { apiUrlError } from '../http/api-url';
import { TaskError } from '../model/errors';
import type { RED } from '../model/red';
import { runtimeText } from '../model/texts';

/**
 * Whether an Account SID is one the `twilio` client takes: it throws "accountSid must start with
 * AC" for anything else, for instance an API key SID (SK…) pasted into the Account SID field.
 */
export function isAccountSid(accountSid: string): boolean {
  return accountSid.startsWith('AC');
}

/** The 4008 a call through the REST API stops with when the Account SID is not one; `environment` names it ("voice Environment "x""). */
export function accountSidError(accountSid: string, environment: string): TaskError | undefined {
  if (isAccountSid(accountSid)) return undefined;
  return new TaskError(
    4008,
    `The Account SID of the ${environment} must begin with AC, not "${accountSid.slice(0, 2)}"; an API key SID (SK…) is not an Account SID`,
  );
}

/** The 4008 a call through the REST API stops with when the Account SID or the `apiUrl` cannot serve it. */
export function restSettingsError(accountSid: string, apiUrl: string, environment: string): TaskError | undefined {
  return accountSidError(accountSid, environment) ?? apiUrlError(apiUrl, environment);
}

/** The deploy log's word on a set Account SID that is not one (an empty one is said as missing), with what it stops. */
export function accountSidSetting(red: RED, accountSid: string, effect: string): UnusableSetting | undefined {
  if (!accountSid || isAccountSid(accountSid)) return undefined;
  return {
    field: 'Account SID',
    line: runtimeText(red, 'core', 'runtime.environment.accountSidNotAc', { start: accountSid.slice(0, 2), effects: effect }),
  };
}
