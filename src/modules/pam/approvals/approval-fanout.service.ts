import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../infra/config/app-config';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { ApprovalRepository } from './approval.repository';

/** The pending elevation request whose approvers are notified. */
export interface FanOutRequest {
  id: string;
  orgId: string;
}

/**
 * Mobile approval fan-out (spec P1.4): when a request is recorded as pending, one approval
 * request per eligible technician and one push-outbox row per phone of each. Call it inside the
 * transaction that inserts the request, after the insert: the rows commit or roll back with it,
 * and nothing here waits on the network (the push worker delivers after commit).
 */
@Injectable()
export class ApprovalFanoutService {
  constructor(
    private readonly repo: ApprovalRepository,
    private readonly tx: TenantTransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  fanOut(request: FanOutRequest): Promise<{ approvals: number; pushes: number }> {
    return this.tx.withSystemContext("find the technicians of the request's organization and partner who may approve it", () =>
      this.repo.fanOut(request.orgId, request.id, this.config.pamPendingTtlMinutes),
    );
  }
}
