import { evaluate, type CompiledRuleSet } from '../../../src/modules/pam/rules/engine/rule-engine';
import { PamRuleSetCacheService } from '../../../src/modules/pam/rules/rule-set-cache.service';
import { PamConfigService } from '../../../src/modules/pam/config/pam-config.service';
import { TenantTransactionService } from '../../../src/infra/database/tenant-transaction.service';
import { startPamWorld, type PamWorld } from './pam-e2e.kit';

/** What the request lifecycle calls: compiled rules and the organization default, fresh after every API write. */
describe('PAM rule-set cache and organization default lookup', () => {
  let w: PamWorld;
  const uac = (signer: string) => ({ flowType: 'uac_intercept' as const, signer, at: new Date() });

  beforeAll(async () => {
    w = await startPamWorld();
  }, 60_000);
  afterAll(() => w.close());

  const ruleSet = (): Promise<CompiledRuleSet> =>
    w.t.app.get(TenantTransactionService).withSystemContext('test reads compiled rules as the decision chain does', () => w.t.app.get(PamRuleSetCacheService).get(w.ids.orgA));

  it('reuses the compiled set while nothing changes and sees every rule or signer-group write at once', async () => {
    const empty = await ruleSet();
    expect(evaluate(empty, uac('Acme Corp'))).toBeNull();
    expect(await ruleSet()).toBe(empty);

    const { body: group } = await w.as.adminA.post('/pam/signer-groups', { name: 'Cache group', signers: ['Acme Corp'] }).expect(201);
    const { body: rule } = await w.as.adminA.post('/pam/rules', { name: 'by group', verdict: 'auto_approve', matchSignerGroupId: group.signerGroup.id }).expect(201);
    const withRule = await ruleSet();
    expect(withRule).not.toBe(empty);
    expect(evaluate(withRule, uac('ACME CORP'))?.rule.id).toBe(rule.rule.id);

    await w.as.adminA.patch(`/pam/signer-groups/${group.signerGroup.id}`, { signers: ['Contoso'] }).expect(200);
    const regrouped = await ruleSet();
    expect(evaluate(regrouped, uac('Acme Corp'))).toBeNull();
    expect(evaluate(regrouped, uac('contoso'))?.rule.id).toBe(rule.rule.id);

    await w.as.adminA.patch(`/pam/rules/${rule.rule.id}`, { enabled: false }).expect(200);
    expect(evaluate(await ruleSet(), uac('Contoso'))).toBeNull();
  });

  it('answers the organization default, require_approval until one is saved', async () => {
    const settings = () =>
      w.t.app.get(TenantTransactionService).withSystemContext('test reads the organization default as the decision chain does', () => w.t.app.get(PamConfigService).settingsFor(w.ids.orgB));
    expect(await settings()).toEqual({ orgId: w.ids.orgB, defaultUnmatchedVerdict: 'require_approval', defaultApprovalDurationMinutes: 15 });
    await w.as.adminB.put('/pam/config', { defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 30 }).expect(200);
    expect(await settings()).toEqual({ orgId: w.ids.orgB, defaultUnmatchedVerdict: 'auto_deny', defaultApprovalDurationMinutes: 30 });
  });
});
