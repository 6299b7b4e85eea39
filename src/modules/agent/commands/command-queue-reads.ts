import { Inject, Injectable } from '@nestjs/common';
import type { TenantScope } from '../../../infra/database/tenant-scope';
import { APP_CONFIG, type AppConfig } from '../../../infra/config/app-config';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import { AgentCommandRepository, type QueueRead, type Take } from './agent-command.repository';

export const COMMANDS_PER_FETCH = 50;
/** Reads sent in one statement at most: a statement for hundreds costs little more than one for one, and none waits on a very long one. */
export const QUEUE_READS_PER_STATEMENT = 200;

interface Waiting {
  read: QueueRead;
  scope: TenantScope;
  resolve: (take: Take) => void;
  reject: (error: unknown) => void;
}

/**
 * Agents' reads of their command queues (polls, and the reads that start and wake held waits),
 * gathered until the event loop has read what arrived with them and sent as one statement per
 * QUEUE_READS_PER_STATEMENT reads (docs/pam-lifecycle.md, "A fleet coming back"). After a deploy a
 * fleet of 10,000 agents reconnects within seconds, each wait starting with a read: one statement
 * each was the instance's largest cost in that storm (a message each way per agent, on a machine
 * where a socket write is dear). A read that arrives alone runs as it always did: one statement
 * alone, with its agent's own settings. Several run in system context of their own, outside any
 * request's transaction (each read names its organization, device and agent, all from the agent's
 * token), each read exactly as alone, in arrival order. A caller already inside a transaction reads
 * alone, in it.
 */
@Injectable()
export class CommandQueueReads {
  private waiting: Waiting[] = [];

  constructor(
    private readonly repo: AgentCommandRepository,
    private readonly tx: TenantTransactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  take(read: QueueRead, scope: TenantScope): Promise<Take> {
    if (this.tx.inTransaction()) return this.alone(read, scope);
    return new Promise((resolve, reject) => {
      this.waiting.push({ read, scope, resolve, reject });
      if (this.waiting.length === 1) setImmediate(() => this.send());
    });
  }

  private alone(read: QueueRead, scope: TenantScope): Promise<Take> {
    return this.tx.runOneStatement(scope, () => this.repo.take(read.orgId, read.deviceId, read.agentId, COMMANDS_PER_FETCH, this.config.agentCommandRedeliverSeconds));
  }

  private send(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (let i = 0; i < waiting.length; i += QUEUE_READS_PER_STATEMENT) {
      const batch = waiting.slice(i, i + QUEUE_READS_PER_STATEMENT);
      const taken =
        batch.length === 1
          ? this.alone(batch[0].read, batch[0].scope).then((take) => [take])
          : this.tx.withSystemLookup('read agents’ command queues in one statement', () =>
              this.repo.takeMany(
                batch.map((w) => w.read),
                COMMANDS_PER_FETCH,
                this.config.agentCommandRedeliverSeconds,
              ),
            );
      taken.then(
        (takes) => batch.forEach((w, n) => w.resolve(takes[n])),
        (error: unknown) => batch.forEach((w) => w.reject(error)),
      );
    }
  }
}
