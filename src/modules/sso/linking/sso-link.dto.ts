import type { Uuid } from '../../../common/openapi/formats';
export class LinkableProviderDto {
  id: Uuid;
  name: string;
  /** Whether the signed-in account already has an identity at this provider. */
  linked: boolean;
  /** The email the IdP reported at the last sign-in or link, when linked. */
  linkedEmail: string | null;
  lastLoginAt: Date | null;
}

export class LinkOptionsDto {
  success: true;
  providers: LinkableProviderDto[];
}

export class LinkStartDto {
  /** Where to send the browser; the state cookie comes with this response. */
  authUrl: string;
}
