import { Injectable } from '@nestjs/common';
import type { PamSettings, SoftwareSettings } from '../features/pam.features';
import { PolicyResolutionRepository, PolicyTarget } from './policy-resolution.repository';
import { AppliedPolicy, closestFirst, resolveSetting } from './policy-resolution.util';

export interface ResolvedPamSettings {
  uacInterceptionEnabled: boolean;
}

const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';

/**
 * What the configuration policies assigned to a device amount to. Runs in the caller's
 * transaction, so row-level security limits it to policies the caller may read.
 */
@Injectable()
export class PolicyResolutionService {
  constructor(private readonly repo: PolicyResolutionRepository) {}

  /** Spec P2.5: closest wins; true when no assigned policy sets it. */
  async pamSettings(target: PolicyTarget): Promise<ResolvedPamSettings> {
    const applied = await this.repo.applied<PamSettings>(target, 'pam');
    return { uacInterceptionEnabled: resolveSetting(applied, 'uacInterceptionEnabled', isBoolean, true) };
  }

  /** Every software policy reaching the device, closest first; the bridge applies them together. */
  async softwarePolicies(target: PolicyTarget): Promise<AppliedPolicy<SoftwareSettings>[]> {
    return closestFirst(await this.repo.applied<SoftwareSettings>(target, 'software'));
  }
}
