import { Logger } from '@nestjs/common';
import { ErrorReporter, type ErrorEvent } from '../../../infra/observability/error-reporter.service';
import type { PamRuleRow } from './pam-rule.repository';
import { PamTierDriftJob, TIER_DRIFT_TAG } from './tier-drift.job';
import { pamRuleRow as rule } from '../../../../test/factories/pam-rule-row.factory';

class RecordingReporter extends ErrorReporter {
  readonly events: ErrorEvent[] = [];
  override async report(event: ErrorEvent): Promise<void> {
    this.events.push(event);
  }
}


function job(rows: PamRuleRow[]) {
  const reporter = new RecordingReporter();
  const tx = { withSystemContext: jest.fn((_reason: string, fn: () => Promise<unknown>) => fn()) };
  const repo = { enabledTierPinned: jest.fn(async () => rows) };
  return { reporter, tx, instance: new PamTierDriftJob(tx as never, repo as never, reporter) };
}

describe('PamTierDriftJob', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('logs [pam-rule-tier-drift] naming each rule that can no longer match and raises one tagged event per rule', async () => {
    const stale = rule({ name: 'Auto-approve file reads at tier 2', match_tool_name: 'read_file', match_risk_tier: 2 });
    const fine = rule({ match_tool_name: 'run_script', match_risk_tier: 4 });
    const { reporter, instance } = job([stale, fine]);
    const findings = await instance.scan();
    expect(findings).toEqual([expect.objectContaining({ ruleId: stale.id, riskTier: 2, validTiers: [0] })]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][1]).toMatch(/^\[pam-rule-tier-drift\] rule "Auto-approve file reads at tier 2"/);
    expect(reporter.events).toEqual([expect.objectContaining({ tag: TIER_DRIFT_TAG, level: 'warning', context: expect.objectContaining({ ruleId: stale.id }) })]);
  });

  it('does not flag a negated tier, an unknown tool or a rule that only narrowed', async () => {
    const { reporter, instance } = job([
      rule({ match_tool_name: 'read_file', match_risk_tier: 3, match_negate: ['riskTier'] }),
      rule({ match_tool_name: 'tool_from_the_future', match_risk_tier: 1 }),
      rule({ match_tool_name: 'manage_local_user', match_risk_tier: 0 }),
    ]);
    expect(await instance.scan()).toEqual([]);
    expect(reporter.events).toEqual([]);
  });

  it('reads the rules of every organization in system context', async () => {
    const { tx, instance } = job([]);
    await instance.scan();
    expect(tx.withSystemContext).toHaveBeenCalledWith(expect.stringContaining('tier-drift'), expect.any(Function));
  });

  it('runs the scan at application start and never lets a failure stop the start', async () => {
    const { instance } = job([rule({ match_tool_name: 'read_file', match_risk_tier: 4 })]);
    const scan = jest.spyOn(instance, 'scan');
    await instance.onApplicationBootstrap();
    expect(scan).toHaveBeenCalledTimes(1);
    scan.mockRejectedValueOnce(new Error('database down'));
    await expect(instance.onApplicationBootstrap()).resolves.toBeUndefined();
  });
});
