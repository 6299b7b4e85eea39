import { IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';
import { NoNul } from '../../../common/text.util';
import type { FlowType } from '../rules/engine/rule.types';
import type { DateTime, Int, Uuid } from '../../../common/openapi/formats';

export class DecideApprovalDto {
  @IsIn(['approve', 'deny']) decision: 'approve' | 'deny';
  /** Optional, also on deny; up to 2000 characters. */
  @IsOptional() @IsString() @MaxLength(2000) @NoNul() reason?: string;
  /** Approval window in minutes, 1 to 1440 (default 15); ignored on deny. */
  @IsOptional() @IsInt() @Min(1) @Max(1440) durationMinutes?: number;
}

export class ApprovalDto {
  id: Uuid;
  elevationRequestId: Uuid;
  orgId: Uuid;
  deviceId: Uuid;
  deviceHostname: string | null;
  flowType: FlowType;
  subjectUsername: string | null;
  targetExecutablePath: string | null;
  targetExecutableSigner: string | null;
  toolName: string | null;
  riskTier: Int | null;
  requestedAt: DateTime;
  /** After this the approval request can no longer be decided (410). */
  expiresAt: DateTime;
}

export class ApprovalListDto {
  success: true;
  approvals: ApprovalDto[];
}

export class DecideApprovalResultDto {
  success: true;
  id: Uuid;
  elevationRequestId: Uuid;
  status: 'approved' | 'denied';
}

export class RegisterMobileDeviceDto {
  @IsIn(['ios', 'android']) platform: 'ios' | 'android';
  /** The APNs or FCM token of the app installation; stored encrypted. */
  @IsString() @Length(1, 4096) @NoNul() pushToken: string;
}

export class MobileDeviceDto {
  id: Uuid;
  platform: 'ios' | 'android';
  createdAt: DateTime;
  updatedAt: DateTime;
}

export class MobileDeviceResponseDto {
  success: true;
  mobileDevice: MobileDeviceDto;
}

export class MobileDeviceListDto {
  success: true;
  mobileDevices: MobileDeviceDto[];
}

export class MobileDeviceDeletedDto {
  success: true;
}
