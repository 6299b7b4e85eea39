import { Inject, Injectable } from '@nestjs/common';
import type { TenantScope } from '../../../infra/database/tenant-scope';
import { Gatherer } from '../../../common/gatherer';
import { APP_CONFIG, type AppConfig } from '../../../infra/config/app-config';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { DeviceCommandService, type QueueRead, type Take } from '../../pam/requests/device-command.service';

export const COMMANDS_PER_FETCH = 50;
/** Reads sent in one statement at most: a statement for hundreds costs little more than one for one, and none waits on a very long one. */
export const QUEUE_READS_PER_STATEMENT = 200;

/**
 * Agents' reads of their command queues (polls, and the reads that start and wake held waits),
 * gathered (common/gatherer.ts): what arrives in one turn of the event loop goes as one statement
 * of up to QUEUE_READS_PER_STATEMENT reads (docs/pam-lifecycle.md, "A fleet coming back"). After a deploy a
 * fleet of 10,000 agents reconnects within seconds, each wait starting with a read: one statement
 * each was the instance's largest cost in that storm (a message each way per agent, on a machine
 * where a socket write is dear). A read that goes alone runs as it always did: one statement alone,
 * with its agent's own settings. Several run in system context of their own, outside any request's
 * transaction (each read names its organization, device and agent, all from the agent's token),
 * each read exactly as alone, in arrival order. A caller already inside a transaction reads alone,
 * in it. The reads themselves are PAM's (DeviceCommandService, which owns device_commands).
 */
@Injectable()
export class CommandQueueReads {
  private readonly gathered = new Gatherer<{ read: QueueRead; scope: TenantScope }, Take>((reads) => this.send(reads), QUEUE_READS_PER_STATEMENT);

  constructor(
    private readonly commands: DeviceCommandService,
    private readonly tx: TenantTransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  take(read: QueueRead, scope: TenantScope): Promise<Take> {
    if (this.tx.inTransaction()) return this.alone(read, scope);
    return this.gathered.call({ read, scope });
  }

  private alone(read: QueueRead, scope: TenantScope): Promise<Take> {
    return this.tx.runOneStatement(scope, () => this.commands.take(read, COMMANDS_PER_FETCH, this.config.agentCommandRedeliverSeconds));
  }

  private async send(reads: { read: QueueRead; scope: TenantScope }[]): Promise<Take[]> {
    if (reads.length === 1) return [await this.alone(reads[0].read, reads[0].scope)];
    return this.tx.withSystemLookup('read agents’ command queues in one statement', () =>
      this.commands.takeMany(
        reads.map((r) => r.read),
        COMMANDS_PER_FETCH,
        this.config.agentCommandRedeliverSeconds,
      ),
    );
  }
}
