import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/principal';
import { SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { AuditService } from '../../audit/audit.service';
import type { MobileDeviceDeletedDto, MobileDeviceDto, MobileDeviceListDto, MobileDeviceResponseDto, RegisterMobileDeviceDto } from './approval.dto';
import { ApprovalErrors } from './approval.errors';
import { MobileDeviceRepository, MobileDeviceRow } from './mobile-device.repository';

export const MAX_MOBILE_DEVICES_PER_USER = 10;

/** Where a push token is sealed: binds the ciphertext to its row. */
export const pushTokenContext = (mobileDeviceId: string) => `mobile_devices.push_token:${mobileDeviceId}`;

const toDto = (r: MobileDeviceRow): MobileDeviceDto => ({
  id: r.id,
  platform: r.platform,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

/** A technician's phones, which receive mobile approval pushes. */
@Injectable()
export class MobileDeviceService {
  constructor(
    private readonly repo: MobileDeviceRepository,
    private readonly box: SecretBoxService,
    private readonly audit: AuditService,
  ) {}

  async register(principal: Principal, dto: RegisterMobileDeviceDto): Promise<MobileDeviceResponseDto> {
    const userId = this.userOf(principal);
    const id = randomUUID();
    const row = await this.repo.upsert({
      id,
      userId,
      platform: dto.platform,
      sealedToken: this.box.encrypt(dto.pushToken, pushTokenContext(id)),
      tokenHmac: this.box.hmac(dto.pushToken),
    });
    if (row.inserted) {
      // Counted after the insert, so that concurrent registrations cannot both pass the check.
      if ((await this.repo.count(userId)) > MAX_MOBILE_DEVICES_PER_USER) throw ApprovalErrors.tooManyDevices(MAX_MOBILE_DEVICES_PER_USER);
      await this.audit.record({ action: 'mobile_device.register', ...this.ownerOf(principal), resourceType: 'mobile_device', resourceId: row.id, details: { platform: dto.platform } });
    }
    return { success: true, mobileDevice: toDto(row) };
  }

  async list(principal: Principal): Promise<MobileDeviceListDto> {
    return { success: true, mobileDevices: (await this.repo.list(this.userOf(principal))).map(toDto) };
  }

  async remove(principal: Principal, id: string): Promise<MobileDeviceDeletedDto> {
    if ((await this.repo.delete(this.userOf(principal), id)) === 0) throw ApprovalErrors.mobileDeviceNotFound();
    await this.audit.record({ action: 'mobile_device.delete', ...this.ownerOf(principal), resourceType: 'mobile_device', resourceId: id });
    return { success: true };
  }

  private userOf(principal: Principal): string {
    if (principal.kind !== 'user' || !principal.userId) throw ApprovalErrors.userRequired();
    return principal.userId;
  }

  /** Audit rows need a tenant; a phone is the user's, so it goes to the session's organization or partner. */
  private ownerOf(principal: Principal): { orgId?: string; partnerId?: string } {
    return principal.scope === 'organization' && principal.orgId ? { orgId: principal.orgId } : { partnerId: principal.partnerId ?? undefined };
  }
}
