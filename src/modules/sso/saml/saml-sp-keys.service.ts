import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SecretBoxService } from '../../../infra/crypto/secret-box.service';
import { TenantTransactionService } from '../../../infra/database/tenant-transaction.service';
import type { SamlTenant } from './saml.repository';
import type { SamlSpKeyEntity } from './saml-sp-key.entity';
import { SamlSpKeysRepository, type SamlSpKeyWithPrivateKey } from './saml-sp-keys.repository';
import { selfSignedCertificate } from './xml/x509-self-signed.util';

/** How long a replaced key stays published and still decrypts (IdPs re-read SP metadata on their own schedule). */
export const SP_KEY_OVERLAP_SECONDS = 7 * 86_400;
/** The certificate is a container for the public key; it is replaced by rotation, not by expiry. */
const SP_CERTIFICATE_VALID_DAYS = 10 * 365;

export interface SpKey {
  id: string;
  certificatePem: string;
  privateKeyPem: string;
  createdAt: Date;
  /** Null for the current key; the end of the overlap window for a replaced one. */
  retiresAt: Date | null;
}

const privateKeyContext = (keyId: string) => `saml_sp_keys.private_key:${keyId}`;

/**
 * The service provider's own RSA key pairs, per provider (the SP entity id is per provider too):
 * the current one signs LogoutRequests and LogoutResponses and is the encryption key of the SP
 * metadata; after a rotation the previous one stays published for encryption, and keeps
 * decrypting, until its overlap window ends. A provider's first key is made at its first use.
 * Private keys are sealed with the encryption key, bound to their row.
 */
@Injectable()
export class SamlSpKeysService {
  constructor(
    private readonly repo: SamlSpKeysRepository,
    private readonly tx: TenantTransactionService,
    private readonly box: SecretBoxService,
  ) {}

  /** The published keys, newest (current) first; makes the first one when there is none. System context. */
  async published(tenant: SamlTenant): Promise<SpKey[]> {
    const rows = await this.withFirstKey(tenant, () => this.repo.publishedKeysWithPrivateKeys(tenant.providerId));
    return rows.map((r) => this.open(r));
  }

  /** The published certificates alone (the public metadata), newest first; private keys are not even read. */
  async certificates(tenant: SamlTenant): Promise<{ certificatePem: string }[]> {
    return (await this.withFirstKey(tenant, () => this.repo.publishedKeys(tenant.providerId))).map((r) => ({ certificatePem: r.certificate }));
  }

  private withFirstKey<K extends Pick<SamlSpKeyEntity, 'retiresAt'>>(tenant: SamlTenant, read: () => Promise<K[]>): Promise<K[]> {
    return this.tx.withSystemContext("the SAML service provider's keys of a provider", async () => {
      const rows = await read();
      if (rows.some((r) => r.retiresAt === null)) return rows;
      await this.repo.insertCurrentKey(tenant, this.newKey());
      return read();
    });
  }

  async current(tenant: SamlTenant): Promise<SpKey> {
    return (await this.published(tenant))[0];
  }

  /**
   * In the caller's transaction (the administrator's scope): the current key enters its overlap
   * window and a new one becomes current.
   */
  async rotate(tenant: SamlTenant): Promise<void> {
    await this.repo.retireCurrentKey(tenant.providerId, SP_KEY_OVERLAP_SECONDS);
    await this.repo.insertCurrentKey(tenant, this.newKey());
  }

  /** The published certificates without private keys, for the administrators' view (caller's transaction). */
  async listed(providerId: string): Promise<{ certificate: string; createdAt: Date; retiresAt: Date | null }[]> {
    return (await this.repo.publishedKeys(providerId)).map((r) => ({ certificate: r.certificate, createdAt: r.createdAt, retiresAt: r.retiresAt }));
  }

  private newKey(): { id: string; certificate: string; privateKeySealed: string } {
    const id = randomUUID();
    const made = selfSignedCertificate(`rmm-saml-sp-${id.slice(0, 8)}`, SP_CERTIFICATE_VALID_DAYS);
    return { id, certificate: made.certificatePem, privateKeySealed: this.box.encrypt(made.privateKeyPem, privateKeyContext(id)) };
  }

  private open(r: SamlSpKeyWithPrivateKey): SpKey {
    return { id: r.id, certificatePem: r.certificate, privateKeyPem: this.box.decrypt(r.privateKey, privateKeyContext(r.id)), createdAt: r.createdAt, retiresAt: r.retiresAt };
  }
}
