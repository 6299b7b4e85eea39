import { Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../infra/config/app-config';
import { PamConfigController } from './config/pam-config.controller';
import { PamConfigRepository } from './config/pam-config.repository';
import { PamConfigService } from './config/pam-config.service';
import { PamRuleController } from './rules/pam-rule.controller';
import { PamRuleRepository } from './rules/pam-rule.repository';
import { PamRuleService } from './rules/pam-rule.service';
import { RulePreviewRepository } from './rules/preview/rule-preview.repository';
import { RulePreviewService } from './rules/preview/rule-preview.service';
import { PamRuleListCacheService } from './rules/rule-list-cache.service';
import { PamRuleSetCacheService } from './rules/rule-set-cache.service';
import { RulesVersionRepository } from './rules/rules-version.repository';
import { PamTierDriftJob } from './rules/tier-drift.job';
import { ErrorReporter, LoggingErrorReporterService } from '../../infra/observability/error-reporter.service';
import { parseSentryDsn, SentryErrorReporterService } from '../../infra/observability/sentry-error-reporter.service';
import { SignerGroupController } from './signer-groups/signer-group.controller';
import { SignerGroupRepository } from './signer-groups/signer-group.repository';
import { SignerGroupService } from './signer-groups/signer-group.service';

/** The log always; a Sentry-compatible collector too when SENTRY_DSN is set and well formed. */
function errorReporterFor(config: AppConfig): ErrorReporter {
  const logging = new LoggingErrorReporterService();
  const target = config.sentryDsn ? parseSentryDsn(config.sentryDsn) : null;
  return target ? new SentryErrorReporterService(target, logging, config.nodeEnv) : logging;
}

/**
 * PAM control plane: rules (CRUD, preview, compiled cache, tier drift at start), signer
 * groups and the organization default. Exports what the decision chain builds on:
 * PamRuleSetCacheService (compiled rules per organization) and PamConfigService.settingsFor (the
 * organization default).
 */
@Module({
  controllers: [PamRuleController, SignerGroupController, PamConfigController],
  providers: [
    PamRuleRepository,
    PamRuleService,
    RulesVersionRepository,
    RulePreviewRepository,
    RulePreviewService,
    PamRuleSetCacheService,
    PamRuleListCacheService,
    PamTierDriftJob,
    SignerGroupRepository,
    SignerGroupService,
    PamConfigRepository,
    PamConfigService,
    { provide: ErrorReporter, useFactory: errorReporterFor, inject: [APP_CONFIG] },
  ],
  exports: [PamRuleSetCacheService, PamConfigService],
})
export class PamControlModule {}
