import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { authenticator } from 'otplib';
import type { components, paths } from './generated/api';

/**
 * One real flow per module, written against the client openapi-typescript generates from the
 * served document (./generated/api.d.ts) and openapi-fetch. They are type-checked against that
 * client (by `npm test`'s pretest and by generated-client.e2e.test.ts, against the document of
 * the run): a field, an enumeration or an answer the document gets wrong fails the compile or the run.
 */

export type Api = Client<paths>;

/** The operations these flows call: the generated client covers exactly these. */
export const FLOW_OPERATIONS: readonly (readonly [keyof paths & string, 'get' | 'post'])[] = [
  ['/api/v1/auth/login', 'post'],
  ['/api/v1/auth/mfa/verify', 'post'],
  ['/api/v1/auth/me', 'get'],
  ['/api/v1/pam/rules', 'post'],
  ['/api/v1/pam/rules', 'get'],
  ['/api/v1/agents/{id}/elevation-requests', 'post'],
  ['/api/v1/pam/elevation-requests/{id}', 'get'],
  ['/api/v1/pam/elevation-requests/{id}/respond', 'post'],
  ['/api/v1/pam/elevation-requests', 'get'],
  ['/api/v1/sso/providers', 'post'],
  ['/api/v1/sso/providers/{id}', 'get'],
  ['/api/v1/imports', 'post'],
  ['/api/v1/imports/{id}', 'get'],
];

export function apiClient(baseUrl: string, check?: Middleware): Api {
  const client = createClient<paths>({ baseUrl });
  if (check) client.use(check);
  return client;
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** An answer the flow needs: its data, or a failure naming the status and the error body. */
function ok<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) throw new Error(`${answer.response.status}: ${JSON.stringify(answer.error)}`);
  return answer.data;
}

/** auth: password, then the MFA challenge answered with a TOTP code; the session is MFA-satisfied. */
export async function signInWithMfa(api: Api, email: string, password: string, totpSecret: string): Promise<{ token: string; mfa: boolean; email: string }> {
  const login = ok(await api.POST('/api/v1/auth/login', { body: { email, password } }));
  if (!('mfaRequired' in login)) throw new Error('an account with MFA must be challenged');
  const pair = ok(await api.POST('/api/v1/auth/mfa/verify', { body: { mfaToken: login.mfaToken, code: authenticator.generate(totpSecret) } }));
  const me = ok(await api.GET('/api/v1/auth/me', { headers: bearer(pair.accessToken) }));
  return { token: pair.accessToken, mfa: me.session.mfa, email: me.user.email };
}

/** pam: a rule that sends one executable (by its SHA-256) for approval; it is listed. */
export async function createApprovalRule(api: Api, token: string, sha256: string): Promise<{ rule: components['schemas']['PamRuleDto']; listed: boolean }> {
  const created = ok(
    await api.POST('/api/v1/pam/rules', {
      headers: bearer(token),
      body: { name: 'Installer needs approval', verdict: 'require_approval', matchHash: sha256, priority: 10, approvalDurationMinutes: 30 },
    }),
  );
  const list = ok(await api.GET('/api/v1/pam/rules', { headers: bearer(token) }));
  return { rule: created.rule, listed: list.rules.some((r) => r.id === created.rule.id) };
}

/** agent: the device's agent reports a UAC prompt, the hash as the agent sends it (either case). */
export async function reportPrompt(api: Api, agent: { id: string; token: string }, sha256: string) {
  return ok(
    await api.POST('/api/v1/agents/{id}/elevation-requests', {
      params: { path: { id: agent.id } },
      headers: bearer(agent.token),
      body: {
        subject_username: 'CORP\\alice',
        target_executable_path: 'C:\\Users\\alice\\Downloads\\setup.exe',
        target_executable_hash: sha256.toUpperCase(),
        target_executable_signer: 'Contoso Ltd',
        observed_at: new Date().toISOString(),
      },
    }),
  );
}

/** pam lifecycle: a technician approves the pending request for 30 minutes; its history shows the rule that sent it. */
export async function approve(api: Api, token: string, requestId: string) {
  const decided = ok(
    await api.POST('/api/v1/pam/elevation-requests/{id}/respond', {
      params: { path: { id: requestId } },
      headers: bearer(token),
      body: { decision: 'approve', durationMinutes: 30, reason: 'Known installer' },
    }),
  );
  const detail = ok(await api.GET('/api/v1/pam/elevation-requests/{id}', { params: { path: { id: requestId } }, headers: bearer(token) }));
  return { status: decided.status, request: detail.request, events: detail.events.map((e) => [e.fromStatus, e.toStatus] as const) };
}

/** pam: the approved requests of the organization, newest first. */
export async function listApproved(api: Api, token: string) {
  const page = ok(await api.GET('/api/v1/pam/elevation-requests', { params: { query: { status: 'approved', limit: 10 } }, headers: bearer(token) }));
  return { ids: page.requests.map((r) => r.id), pagination: page.pagination };
}

/** sso: a SAML provider for the organization, created inactive, read back. */
export async function createSamlProvider(api: Api, token: string) {
  const created = ok(await api.POST('/api/v1/sso/providers', { headers: bearer(token), body: { type: 'saml', name: 'Contoso Entra ID', entityId: 'https://sts.contoso.test/idp' } }));
  const read = ok(await api.GET('/api/v1/sso/providers/{id}', { params: { path: { id: created.provider.id } }, headers: bearer(token) }));
  return { created: created.provider, read: read.provider };
}

/** imports: an interchange document with one customer, its device and contact; the job runs to its report. */
export async function importDocument(api: Api, token: string, label: string) {
  const document: components['schemas']['InterchangeDocument'] = {
    format: 'rmm-interchange',
    version: 1,
    source: { system: 'client-flow' },
    customers: [
      {
        externalId: `cust-${label}`,
        name: `Customer ${label}`,
        devices: [{ externalId: `dev-${label}`, hostname: `WS-${label}` }],
        contacts: [{ externalId: `contact-${label}`, name: 'Pat Doe', email: `pat.${label}@example.test` }],
      },
    ],
  };
  const started = ok(await api.POST('/api/v1/imports', { headers: bearer(token), body: document }));
  let job = started.import;
  for (let i = 0; i < 600 && (job.status === 'queued' || job.status === 'running'); i++) {
    await new Promise((r) => setTimeout(r, 50));
    job = ok(await api.GET('/api/v1/imports/{id}', { params: { path: { id: started.import.id } }, headers: bearer(token) })).import;
  }
  return job;
}
