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
import { PamRuleListCache } from './rules/rule-list-cache.service';
import { PamRuleSetCache } from './rules/rule-set-cache.service';
import { RulesVersionRepository } from './rules/rules-version.repository';
import { PamTierDriftJob } from './rules/tier-drift.job';
import { ErrorReporter, LoggingErrorReporter } from '../../infra/observability/error-reporter.service';
import { parseSentryDsn, SentryErrorReporter } from '../../infra/observability/sentry-error-reporter.service';
import { SignerGroupController } from './signer-groups/signer-group.controller';
import { SignerGroupRepository } from './signer-groups/signer-group.repository';
import { SignerGroupService } from './signer-groups/signer-group.service';

/** The log always; a Sentry-compatible collector too when SENTRY_DSN is set and well formed. */
function errorReporterFor(config: AppConfig): ErrorReporter {
  const logging = new LoggingErrorReporter();
  const target = config.sentryDsn ? parseSentryDsn(config.sentryDsn) : null;
  return target ? new SentryErrorReporter(target, logging, config.nodeEnv) : logging;
}

/**
 * PAM control plane: rules (CRUD, preview, compiled cache, tier drift at start), signer
 * groups and the organization default. Exports what the decision chain builds on:
 * PamRuleSetCache (compiled rules per organization) and PamConfigService.settingsFor (the
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
    PamRuleSetCache,
    PamRuleListCache,
    PamTierDriftJob,
    SignerGroupRepository,
    SignerGroupService,
    PamConfigRepository,
    PamConfigService,
    { provide: ErrorReporter, useFactory: errorReporterFor, inject: [APP_CONFIG] },
  ],
  exports: [PamRuleSetCache, PamConfigService],
})
export class PamControlModule {}
