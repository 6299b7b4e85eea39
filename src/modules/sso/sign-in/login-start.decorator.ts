import { applyDecorators, ExecutionContext, Get } from '@nestjs/common';
import { ApiOperation, ApiQuery } from '@nestjs/swagger';
import { Throttle } from '@nestjs/throttler';
import type { Request } from 'express';
import { ApiErrors, ApiRedirect } from '../../../common/decorators/api-errors.decorator';
import { Public } from '../../../common/decorators/auth.decorator';
import { REDIRECT_QUERY } from '../login/sso-login.dto';

const FIVE_MINUTES = 5 * 60_000;
const PER_ADDRESS = 30;
const PER_TENANT = 10;

const tenantTracker = (req: Request) => `${req.ip}:${String(req.params.orgId ?? req.params.partnerId ?? '').toLowerCase()}`;

/**
 * The limits of every SSO login start, OIDC and SAML (docs/api-conventions.md): 30 per 5 minutes
 * per client address on each route, and 10 per 5 minutes per (client address, organization or
 * partner) across all of them, one budget whichever protocol or route starts the sign-in.
 */
export const LOGIN_START_LIMITS: Parameters<typeof Throttle>[0] = {
  default: { limit: PER_ADDRESS, ttl: FIVE_MINUTES },
  'per-tenant': {
    limit: PER_TENANT,
    ttl: FIVE_MINUTES,
    getTracker: (req) => tenantTracker(req as Request),
    generateKey: (_context: ExecutionContext, tracker: string) => `sso-login-start:${tracker}`,
  },
};

/** Whose provider a start route uses: a partner's (its technicians sign in) or an organization's. */
export type StartOwner = 'partner' | 'organization';

/** What the start routes of one protocol tell integrators beyond what every start route shares. */
export interface StartProtocol {
  /** `OIDC` or `SAML`: the only kind of provider these routes start a sign-in with. */
  name: string;
  /** What the browser takes to the identity provider. */
  request: string;
  /** The other protocol: its providers are refused with the `loginUrl` of its start route. */
  other: string;
}

const START_PATH: Record<StartOwner, string> = { partner: 'login/partner/:partnerId', organization: 'login/:orgId' };
const FOR_WHOM: Record<StartOwner, string> = { partner: "for the partner's technicians", organization: 'for an organization' };

/** The summary and details of a start route in the OpenAPI document: what integrators read. */
function startDocs(owner: StartOwner, protocol: StartProtocol): { summary: string; description: string; redirectsTo: string } {
  const redirectsTo = `to the ${owner}'s identity provider with ${protocol.request}`;
  const other = `${/^[AEIOU]/.test(protocol.other) ? 'an' : 'a'} ${protocol.other} provider`;
  return {
    summary: `Starts ${protocol.name} sign-in ${FOR_WHOM[owner]}: redirects (302) ${redirectsTo}.`,
    description:
      `Public; a browser navigation, not an API call. Uses the ${owner}'s oldest active provider, which must be ${protocol.name}, ` +
      'and sets the `svc_sso_state` cookie; `redirect` is the same-origin path to return to afterwards. ' +
      `404 when the ${owner} has no active provider; 400 \`sso_protocol_unsupported\` for ${other}, with \`loginUrl\`: ` +
      `the ${owner}'s ${protocol.other} start route; 400 \`invalid_provider_configuration\` when it cannot start a sign-in; ` +
      `429 past ${PER_ADDRESS} starts per 5 minutes per address, or ${PER_TENANT} per ${owner}.`,
    redirectsTo,
  };
}

/**
 * A public GET that starts an SSO sign-in with the owner's provider: rate limited, answered with
 * a redirect to the IdP, and described for the protocol whose controller declares it.
 */
export const LoginStart = (owner: StartOwner, protocol: StartProtocol) => {
  const { summary, description, redirectsTo } = startDocs(owner, protocol);
  return applyDecorators(
    Get(START_PATH[owner]),
    Public(),
    Throttle(LOGIN_START_LIMITS),
    ApiOperation({ summary, description }),
    ApiRedirect(redirectsTo),
    ApiQuery(REDIRECT_QUERY),
    ApiErrors({ 400: ['sso_protocol_unsupported', 'invalid_provider_configuration'] }),
  );
};
