import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { Principal } from '../../common/principal';
import { APP_CONFIG, AppConfig } from '../../infra/config/app-config';
import { REQUEST_KEY, RequestContext } from '../../infra/context/request-context';
import { PrincipalResolverService } from '../auth/principal-resolver.service';
import { ScimError } from './scim-error';
import type { ConnectionScope } from './scim-user.repository';

/**
 * What the Users and Groups flows share about the request: the connection its principal stands
 * for, the SCIM URLs of resources, and forgetting cached principals whose access changed.
 */
@Injectable()
export class ScimContextService {
  constructor(
    private readonly resolver: PrincipalResolverService,
    private readonly cls: RequestContext,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The connection of a SCIM principal, with the organization or (partner connection) partner it governs. */
  scopeOf(p: Principal): ConnectionScope {
    if (p.kind !== 'scim' || !p.scimConnectionId) throw new ScimError(401, 'A SCIM token is required');
    return { connectionId: p.scimConnectionId, orgId: p.scope === 'organization' ? p.orgId : null, partnerId: p.partnerId };
  }

  /** The SCIM base URL (`<PUBLIC_URL>/api/v1/scim/v2`): every `meta.location` starts with it. */
  baseUrl(): string {
    return `${this.config.publicUrl}/api/v1/scim/v2`;
  }

  location(kind: 'Users' | 'Groups', id: string): string {
    return `${this.baseUrl()}/${kind}/${id}`;
  }

  /** The principal cache forgets these sessions now (their holder was deprovisioned). */
  forgetSessions(sessionIds: readonly string[]): void {
    for (const sid of sessionIds) this.resolver.forgetSession(sid);
  }

  /**
   * The principal cache forgets the person now, and again once the answer has left (after the
   * commit), so that no request reads the old grant back in between.
   */
  forgetAfterCommit(userId: string): void {
    this.resolver.forgetUser(userId);
    const res = this.cls.isActive() ? this.cls.get<Request | undefined>(REQUEST_KEY)?.res : undefined;
    res?.once('finish', () => this.resolver.forgetUser(userId));
  }
}
