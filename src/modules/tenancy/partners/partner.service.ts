import { Injectable } from '@nestjs/common';
import { PartnerRepository } from './partner.repository';

/**
 * Partners, the top of the tenancy hierarchy. No route creates one: the first partner comes from
 * the bootstrap-admin command (src/cli/bootstrap-admin.ts), which calls this service in its
 * system transaction.
 */
@Injectable()
export class PartnerService {
  constructor(private readonly repo: PartnerRepository) {}

  /** The new partner's id. */
  create(name: string): Promise<string> {
    return this.repo.insert(name);
  }
}
