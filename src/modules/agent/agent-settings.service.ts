import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/principal';
import { PolicyResolutionService } from '../policies/resolution/policy-resolution.service';
import type { PamSettingsDto } from './dto/elevation-ingest.dto';

/** Settings an agent pulls for its own device, resolved from the configuration policies assigned to it. */
@Injectable()
export class AgentSettingsService {
  constructor(private readonly policies: PolicyResolutionService) {}

  pamSettings(principal: Principal): Promise<PamSettingsDto> {
    const { orgId, siteId, deviceId } = principal.agent!;
    return this.policies.pamSettings({ orgId, siteId, deviceId });
  }
}
