import { Injectable } from '@nestjs/common';
import { IdpNetworkService } from '../../discovery/idp-network.service';
import { SafeFetchError } from '../../../../infra/net/net.errors';
import { IdpMetadata, parseIdpMetadata } from '../xml/saml-metadata.util';
import { SamlXmlError } from '../xml/saml-xml.errors';

/** IdP metadata is a few KB; aggregates of one IdP with many keys stay far below this. */
export const MAX_IDP_METADATA_BYTES = 512 * 1024;

/** Why metadata could not be imported: a network reason of the safe client, or an XML one. */
export class IdpMetadataImportError extends Error {
  override readonly name = 'IdpMetadataImportError';
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads an IdP's SAML metadata (`idpMetadataXml` / `idpMetadataUrl`, docs/sso-saml.md) into its
 * entity id, HTTP-Redirect SSO URL and every signing certificate. A URL is fetched with the
 * safe client under the OIDC discovery rules (https, public addresses only, no redirects,
 * bounded size and time), so call it with no transaction open.
 */
@Injectable()
export class IdpMetadataImporterService {
  constructor(private readonly network: IdpNetworkService) {}

  async load(source: { xml: string } | { url: string }): Promise<IdpMetadata> {
    const xml = 'xml' in source ? source.xml : await this.fetch(source.url);
    try {
      return parseIdpMetadata(xml);
    } catch (error) {
      if (error instanceof SamlXmlError) throw new IdpMetadataImportError(error.code, `The IdP metadata cannot be used: ${error.message}`);
      throw error;
    }
  }

  private async fetch(url: string): Promise<string> {
    try {
      return await this.network.http.fetchText(url, { maxBytes: MAX_IDP_METADATA_BYTES, headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    } catch (error) {
      if (error instanceof SafeFetchError) throw new IdpMetadataImportError(error.reason, `The IdP metadata could not be fetched: ${error.message}`);
      throw error;
    }
  }
}
