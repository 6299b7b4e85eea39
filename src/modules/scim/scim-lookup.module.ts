import { Global, Module } from '@nestjs/common';
import { ScimConnectionLookup } from '../auth/scim-connection-lookup';
import { ScimConnectionLookupRepository } from './scim-connection-lookup.repository';

/**
 * Supplies principal resolution (AuthModule) with the SCIM connection lookup. Global because
 * ScimModule imports AuthModule: AuthModule cannot import the scim module that owns the table.
 */
@Global()
@Module({
  providers: [{ provide: ScimConnectionLookup, useClass: ScimConnectionLookupRepository }],
  exports: [ScimConnectionLookup],
})
export class ScimLookupModule {}
