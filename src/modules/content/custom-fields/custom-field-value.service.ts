import { Injectable } from '@nestjs/common';
import { canAccessSite, Principal } from '../../../common/principal';
import { AuditService } from '../../audit/audit.service';
import type { SuccessDto } from '../../../common/pagination.dto';
import { requireSite } from '../../../common/tenant-access.util';
import { ContentErrors } from '../content.errors';
import { checkValue } from './custom-field-value.util';
import { CustomFieldErrors } from './custom-field.errors';
import type { DeviceCustomFieldValueDto, DeviceCustomFieldValueResponseDto, DeviceCustomFieldValuesDto } from './custom-field.dto';
import type { CustomFieldValueWithDefinition } from './custom-field-value.entity';
import { CustomFieldRepository, DeviceRef } from './custom-field.repository';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';

function toValueDto(v: CustomFieldValueWithDefinition): DeviceCustomFieldValueDto {
  return { definitionId: v.definitionId, key: v.definition.key, name: v.definition.name, type: v.definition.type, value: v.value, updatedAt: v.updatedAt.toISOString() };
}

/**
 * Custom-field values of one device, checked against their definition. The device's site
 * bounds who may read (others see 404) and write (403).
 */
@Injectable()
export class CustomFieldValueService {
  constructor(
    private readonly repo: CustomFieldRepository,
    private readonly audit: AuditService,
    private readonly tx: TenantTransactionService,
  ) {}

  async list(principal: Principal, deviceId: string): Promise<DeviceCustomFieldValuesDto> {
    const device = await this.readable(principal, deviceId);
    return { success: true, deviceId, values: (await this.repo.values(device.org_id, deviceId)).map(toValueDto) };
  }

  async set(principal: Principal, deviceId: string, definitionId: string, raw: unknown): Promise<DeviceCustomFieldValueResponseDto> {
    const device = await this.writable(principal, deviceId);
    const def = await this.repo.find(definitionId);
    if (!def) throw CustomFieldErrors.notFound();
    if (def.orgId ? def.orgId !== device.org_id : def.partnerId !== device.partner_id) throw CustomFieldErrors.notApplicable();
    const checked = checkValue(def, raw);
    if (!checked.ok) throw CustomFieldErrors.invalidValue(checked.message);
    const changed = await this.repo.upsertValue(device.org_id, deviceId, definitionId, checked.value);
    if (changed) {
      await this.audit.record({ action: 'device.custom_field.set', orgId: device.org_id, resourceType: 'device', resourceId: deviceId, details: { definitionId, key: def.key } });
    }
    const [row] = await this.repo.values(device.org_id, deviceId, definitionId);
    return { success: true, value: toValueDto(row) };
  }

  async clear(principal: Principal, deviceId: string, definitionId: string): Promise<SuccessDto> {
    const device = await this.writable(principal, deviceId);
    if (!(await this.repo.deleteValue(device.org_id, deviceId, definitionId))) throw CustomFieldErrors.valueNotFound();
    await this.audit.record({ action: 'device.custom_field.clear', orgId: device.org_id, resourceType: 'device', resourceId: deviceId, details: { definitionId } });
    return { success: true };
  }

  private async readable(principal: Principal, deviceId: string): Promise<DeviceRef> {
    const device = await this.repo.device(deviceId);
    if (!device || !canAccessSite(principal, device.site_id)) throw ContentErrors.deviceNotFound();
    return device;
  }

  private async writable(principal: Principal, deviceId: string): Promise<DeviceRef> {
    const device = await this.tx.withAllSites('a device of another site is refused with 403', () => this.repo.device(deviceId));
    if (!device) throw ContentErrors.deviceNotFound();
    requireSite(principal, device.site_id);
    return device;
  }
}
