import { DEFAULT_EVIL_NAME_ID, applyXsw, createTestSamlIdp, decodeSamlResponse, generateSigningCredentials, injectNameIdComment, ParsedAuthnRequest, TestSamlIdp, XSW_VARIANTS } from '../../support/idp/saml-idp';
import { tenantFixture, PASSWORD, uniq } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, TestApp } from '../../support/test-app';
import { exchangeCodeOf, verifyDomain } from '../sso-login/sso-login.kit';
import { AcsAnswer, insertSamlProvider, lastRejection, postAcs, samlRoundTrip, SamlStarted, startSamlLogin } from './saml.kit';

/**
 * Every forged or misdirected response must end in a redirect with a contract code and mint
 * nothing: no session and no exchange code, for anyone.
 */
describe('SAML ACS against forged and misdirected responses', () => {
  let t: TestApp;
  let idp: TestSamlIdp;
  let f: ReturnType<typeof tenantFixture> & { emails: Record<string, string> };
  let ids: Record<string, string>;
  let provider: string;
  let providerB: string;
  let attacker: string;
  let victim: string;
  let splitFull: string;
  let splitPrefix: string;

  beforeAll(async () => {
    t = await startTestApp();
    idp = createTestSamlIdp();
    f = tenantFixture();
    const label = uniq('evil');
    // The attacker owns a legitimate IdP account whose address extends the victim's.
    splitPrefix = `user@${label}.com`;
    splitFull = `user@${label}.com.example.com`;
    f.users!.push(
      { key: 'attacker', email: `attacker@${f.emails.adminA.split('@')[1]}`, name: 'Attacker', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'readerRoleA' }] },
      { key: 'splitPrefix', email: splitPrefix, name: 'Split victim', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'adminRoleA' }] },
      { key: 'splitFull', email: splitFull, name: 'Split attacker', password: PASSWORD, memberships: [{ organization: 'orgA', role: 'readerRoleA' }] },
    );
    ids = await t.seed(f);
    attacker = `attacker@${f.emails.adminA.split('@')[1]}`;
    victim = f.emails.adminA;
    await verifyDomain(ids.orgA, f.emails.adminA.split('@')[1]);
    await verifyDomain(ids.orgA, `${label}.com`);
    await verifyDomain(ids.orgA, `${label}.com.example.com`);
    await verifyDomain(ids.orgB, f.emails.adminA.split('@')[1]);
    provider = await insertSamlProvider({ orgId: ids.orgA, idp, defaultRoleId: ids.readerRoleA, defaultRoleSetBy: ids.adminA });
    // Organization B trusts the very same IdP (same entity id and key).
    providerB = await insertSamlProvider({ orgId: ids.orgB, idp, defaultRoleId: ids.adminRoleB, defaultRoleSetBy: ids.adminB });
  });
  afterAll(async () => {
    await t.close();
  });

  const loginA = () => `/api/v1/sso/saml/login/${ids.orgA}`;

  /**
   * Sessions and exchange codes of every user of this fixture and of any account the two
   * providers could have created: none may appear.
   */
  async function minted(): Promise<{ sessions: number; codes: number }> {
    const users = Object.keys(ids).filter((key) => f.users!.some((u) => u.key === key)).map((key) => ids[key]);
    const [row] = await ownerQuery<{ sessions: string; codes: string }>(
      `WITH s AS (SELECT id FROM sessions WHERE user_id = ANY($1::uuid[]) OR sso_provider_id = ANY($2::uuid[]))
       SELECT (SELECT count(*) FROM s) AS sessions, (SELECT count(*) FROM sso_exchange_codes WHERE session_id IN (SELECT id FROM s)) AS codes`,
      [users, [provider, providerB]],
    );
    return { sessions: Number(row.sessions), codes: Number(row.codes) };
  }

  /** `reason` null: the refusal names no login session, so its audit row belongs to no provider. */
  async function expectRefused(attempt: () => Promise<AcsAnswer>, code: string, reason: string | null, providerId = provider): Promise<void> {
    const before = await minted();
    const answer = await attempt();
    expect(answer.status).toBe(302);
    expect(answer.location).toBe(`/login?error=${code}`);
    expect(exchangeCodeOf(answer.location)).toBeNull();
    expect(await minted()).toEqual(before);
    if (reason !== null) expect(await lastRejection(providerId)).toEqual({ code, reason });
  }

  const forged = (build: (req: ParsedAuthnRequest) => string) => () => samlRoundTrip(t, loginA(), build);

  it('refuses an unsigned response', async () => {
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, sign: 'none' })), 'sso_error', 'signature_invalid');
  });

  it('refuses an unsigned assertion inside a response whose genuine signature does not cover it', async () => {
    await expectRefused(
      forged((req) => idp.signatureNotCoveringAssertion(idp.buildResponseFor(req, { nameId: attacker, sign: 'response' }), victim)),
      'sso_error',
      'signature_invalid',
    );
  });

  it('refuses a response signed by a key the provider does not trust', async () => {
    const stranger = generateSigningCredentials('stranger-idp');
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, key: stranger })), 'sso_error', 'signature_invalid');
  });

  it.each(XSW_VARIANTS)('refuses signature wrapping XSW%i that names another user', async (variant) => {
    const sign = variant <= 2 ? 'response' : 'assertion';
    await expectRefused(forged((req) => applyXsw(variant, idp.buildResponseFor(req, { nameId: attacker, sign }), victim)), 'sso_error', 'signature_invalid');
  });

  it('refuses the XSW variants even when both the response and the assertion are signed', async () => {
    for (const variant of XSW_VARIANTS) {
      await expectRefused(forged((req) => applyXsw(variant, idp.buildResponseFor(req, { nameId: attacker, sign: 'both' }), DEFAULT_EVIL_NAME_ID)), 'sso_error', 'signature_invalid');
    }
  });

  describe('a comment splitting the NameID (user@evil.com<!---->.example.com)', () => {
    it('signs the attacker in as themself when the response is untouched (the control, which the counts see)', async () => {
      const before = await minted();
      const ok = await samlRoundTrip(t, loginA(), (req) => idp.buildResponseFor(req, { nameId: splitFull }));
      expect(ok.location).toMatch(/#ssoCode=/);
      expect(await minted()).toEqual({ sessions: before.sessions + 1, codes: before.codes + 1 });
      const [session] = await ownerQuery(`SELECT user_id FROM sessions WHERE sso_provider_id = $1 ORDER BY created_at DESC LIMIT 1`, [provider]);
      expect(session).toEqual({ user_id: ids.splitFull });
    });

    it('refuses the split response outright: neither the prefix account nor the full account gets a session', async () => {
      const sessionsOf = async (userId: string) => Number((await ownerQuery<{ n: string }>(`SELECT count(*) AS n FROM sessions WHERE user_id = $1`, [userId]))[0].n);
      const [prefixBefore, fullBefore] = [await sessionsOf(ids.splitPrefix), await sessionsOf(ids.splitFull)];
      await expectRefused(forged((req) => injectNameIdComment(idp.buildResponseFor(req, { nameId: splitFull }), splitPrefix)), 'sso_error', 'xml_comment_in_response');
      expect([await sessionsOf(ids.splitPrefix), await sessionsOf(ids.splitFull)]).toEqual([prefixBefore, fullBefore]);
    });

    it('refuses a split even when the signature covers the whole response', async () => {
      await expectRefused(
        forged((req) => injectNameIdComment(idp.buildResponseFor(req, { nameId: splitFull, sign: 'both' }), splitPrefix)),
        'sso_error',
        'xml_comment_in_response',
      );
    });
  });

  it('refuses a response for another service provider (wrong Audience)', async () => {
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, audience: 'https://other-sp.example/metadata' })), 'sso_error', 'audience_mismatch');
  });

  it('refuses a response addressed to another endpoint (wrong Destination)', async () => {
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, destination: 'https://other-sp.example/acs' })), 'sso_error', 'destination_mismatch');
  });

  it('refuses an assertion confirmed for another endpoint (wrong Recipient), and one without a Recipient', async () => {
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, recipient: 'https://other-sp.example/acs' })), 'sso_error', 'recipient_mismatch');
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, recipient: null })), 'sso_error', 'recipient_mismatch');
  });

  it('refuses a response from another IdP entity, even signed with the trusted key (wrong Issuer)', async () => {
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, issuer: 'https://other-idp.example/metadata' })), 'sso_error', 'response_issuer_mismatch');
  });

  it('refuses an expired assertion', async () => {
    const now = Date.now();
    await expectRefused(
      forged((req) => idp.buildResponseFor(req, { nameId: victim, issueInstant: new Date(now - 20 * 60_000), notBefore: new Date(now - 20 * 60_000), notOnOrAfter: new Date(now - 2 * 60_000) })),
      'sso_error',
      'subject_confirmation_outside_validity_window',
    );
  });

  it('refuses an assertion that is not valid yet, beyond the one-minute skew', async () => {
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, notBefore: new Date(Date.now() + 5 * 60_000) })), 'sso_error', 'assertion_not_yet_valid');
  });

  it('accepts an assertion valid from 30 seconds in the future, within the skew', async () => {
    const ok = await samlRoundTrip(t, loginA(), (req) => idp.buildResponseFor(req, { nameId: attacker, notBefore: new Date(Date.now() + 30_000) }));
    expect(ok.location).toMatch(/#ssoCode=/);
  });

  it('refuses a response to an unknown request (InResponseTo)', async () => {
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, inResponseTo: '_0123456789abcdef' })), 'sso_error', 'in_response_to_mismatch');
  });

  it('refuses an IdP-initiated response posted with a login session (no InResponseTo)', async () => {
    await expectRefused(forged((req) => idp.buildResponseFor(req, { nameId: victim, inResponseTo: null })), 'sso_error', 'in_response_to_missing');
  });

  it('refuses a response whose request is no longer in the shared InResponseTo cache', async () => {
    await expectRefused(async () => {
      const started = await startSamlLogin(t, loginA());
      await ownerQuery(`DELETE FROM saml_request_cache WHERE request_id = $1`, [started.request!.id]);
      return postAcs(t, { SAMLResponse: idp.buildResponseFor(started.request!, { nameId: victim }), RelayState: started.request!.relayState }, started.cookie);
    }, 'sso_error', 'in_response_to_invalid');
  });

  it('refuses an answer to an earlier, already answered request replayed into a new login session', async () => {
    const first = await samlRoundTrip(t, loginA(), (req) => idp.buildResponseFor(req, { nameId: attacker }));
    expect(first.location).toMatch(/#ssoCode=/);
    const old = first.started.request!;
    await expectRefused(forged(() => idp.buildResponseFor(old, { nameId: victim })), 'sso_error', 'in_response_to_mismatch');
  });

  it('refuses the same response posted twice: the first signs in, the second finds no login session', async () => {
    const first = await samlRoundTrip(t, loginA(), (req) => idp.buildResponseFor(req, { nameId: attacker }));
    expect(first.location).toMatch(/#ssoCode=/);
    await expectRefused(
      () => postAcs(t, { SAMLResponse: first.response, RelayState: first.started.request!.relayState }, first.started.cookie),
      'session_expired',
      null,
    );
    const fresh = await startSamlLogin(t, loginA());
    await expectRefused(() => postAcs(t, { SAMLResponse: first.response, RelayState: fresh.request!.relayState }, fresh.cookie), 'sso_error', 'in_response_to_mismatch');
  });

  it('refuses an assertion that has already been used, even inside an otherwise valid response', async () => {
    await expectRefused(async () => {
      const started = await startSamlLogin(t, loginA());
      const response = idp.buildResponseFor(started.request!, { nameId: attacker });
      const assertionId = /<saml:Assertion[^>]* ID="([^"]+)"/.exec(decodeSamlResponse(response))![1];
      await ownerQuery(
        `INSERT INTO saml_consumed_assertions (org_id, provider_id, assertion_id, expires_at) VALUES ($1, $2, $3, now() + interval '10 minutes')`,
        [ids.orgA, provider, assertionId],
      );
      return postAcs(t, { SAMLResponse: response, RelayState: started.request!.relayState }, started.cookie);
    }, 'sso_error', 'assertion_replayed');
  });

  it("refuses a response for another provider's login session, even from the same IdP and key", async () => {
    const atB: SamlStarted = await startSamlLogin(t, `/api/v1/sso/saml/login/${ids.orgB}`);
    const forB = idp.buildResponseFor(atB.request!, { nameId: f.emails.adminB });
    const atA = await startSamlLogin(t, loginA());
    await expectRefused(() => postAcs(t, { SAMLResponse: forB, RelayState: atA.request!.relayState }, atA.cookie), 'sso_error', 'in_response_to_mismatch');
    // B's own attempt was not touched by the attack and still completes.
    const own = await postAcs(t, { SAMLResponse: forB, RelayState: atB.request!.relayState }, atB.cookie);
    expect(own.location).toMatch(/#ssoCode=/);
    expect(await lastRejection(providerB)).toBeUndefined();
  });

  it("refuses A's RelayState with B's cookie: the browser binding holds across providers", async () => {
    const atA = await startSamlLogin(t, loginA());
    const atB = await startSamlLogin(t, `/api/v1/sso/saml/login/${ids.orgB}`);
    await expectRefused(
      () => postAcs(t, { SAMLResponse: idp.buildResponseFor(atA.request!, { nameId: victim }), RelayState: atA.request!.relayState }, atB.cookie),
      'invalid_callback',
      'state_cookie_mismatch',
    );
  });

  it('refuses a document with a DOCTYPE, a malformed one and a missing SAMLResponse', async () => {
    const withDoctype = (req: ParsedAuthnRequest) =>
      Buffer.from(`<!DOCTYPE r [<!ENTITY x "y">]>${decodeSamlResponse(idp.buildResponseFor(req, { nameId: victim }))}`).toString('base64');
    await expectRefused(forged(withDoctype), 'sso_error', 'response_doctype_forbidden');
    await expectRefused(forged(() => Buffer.from('<samlp:Response').toString('base64')), 'sso_error', 'response_malformed_xml');
    await expectRefused(async () => {
      const started = await startSamlLogin(t, loginA());
      return postAcs(t, { RelayState: started.request!.relayState }, started.cookie);
    }, 'sso_error', 'saml_response_missing');
  });

  it('never redirects with library or XML text, whatever is posted', async () => {
    await expectRefused(async () => {
      const started = await startSamlLogin(t, loginA());
      return postAcs(t, { SAMLResponse: '!!!not base64 <xml>', RelayState: started.request!.relayState }, started.cookie);
    }, 'sso_error', 'response_malformed_xml');
  });
});
