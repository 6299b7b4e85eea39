import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tenantFixture } from '../../factories/tenant.factory';
import { ownerQuery, startTestApp, type TestApp } from '../../support/test-app';

interface Collected {
  tags: { tag: string };
  level: string;
  message: { formatted: string };
  extra: { ruleId: string; validTiers: number[] };
}

/**
 * Risk-tier drift is surfaced at every start (spec P4.2, P6.3): rules pinned to a tier their
 * tool no longer resolves to are reported through the error reporter, here a
 * Sentry-compatible collector on loopback.
 */
describe('PAM risk-tier drift scan at start-up', () => {
  let collector: Server;
  let events: Collected[];
  let app: TestApp | null = null;

  beforeAll(async () => {
    events = [];
    collector = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        events.push(JSON.parse(body));
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await app?.close();
    await new Promise<void>((resolve) => collector.close(() => resolve()));
  });

  it('raises one pam_rule_risk_tier_unreachable event per enabled rule that can no longer match, and none for the others', async () => {
    const seeder = await startTestApp();
    const ids = await seeder.seed(tenantFixture());
    await seeder.close();
    const insert = async (name: string, tool: string | null, tier: number, extra: { enabled?: boolean; negate?: string[] } = {}) =>
      (
        await ownerQuery<{ id: string }>(
          `INSERT INTO pam_rules (org_id, name, verdict, enabled, match_tool_name, match_risk_tier, match_negate) VALUES ($1, $2, 'auto_approve', $3, $4, $5, $6) RETURNING id`,
          [ids.orgA, name, extra.enabled ?? true, tool, tier, extra.negate ?? null],
        )
      )[0].id;
    const drifted = await insert('Auto-approve file reads at tier 2', 'read_file', 2);
    const disabled = await insert('disabled drifted rule', 'read_file', 3, { enabled: false });
    const negated = await insert('negated tier', 'read_file', 3, { negate: ['riskTier'] });
    const fine = await insert('reachable tier', 'run_script', 3);
    const unknown = await insert('unknown tool', 'tool_from_the_future', 1);

    const port = (collector.address() as AddressInfo).port;
    app = await startTestApp({ SENTRY_DSN: `http://publickey@127.0.0.1:${port}/7` });

    const mine = events.filter((event) => [drifted, disabled, negated, fine, unknown].includes(event.extra?.ruleId));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      tags: { tag: 'pam_rule_risk_tier_unreachable' },
      level: 'warning',
      extra: { ruleId: drifted, validTiers: [0] },
    });
    expect(mine[0].message.formatted).toMatch(/^\[pam-rule-tier-drift\] rule "Auto-approve file reads at tier 2"/);
  }, 60_000);
});
