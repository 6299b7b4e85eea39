import { Global, Module } from '@nestjs/common';
import { PrincipalCache } from '../../common/principal-cache';
import { AuthModule } from './auth.module';
import { PrincipalResolverService } from './principal-resolver.service';

/**
 * Supplies PrincipalCache (src/common/principal-cache.ts) to the modules that change what a caller
 * may do: tenancy's membership, invitation and role services forget the callers they changed
 * through it. Global, and imported once by AppModule, so that TenancyModule does not import
 * AuthModule, which sits above it (AuthModule imports tenancy's UserAccountsModule).
 */
@Global()
@Module({
  imports: [AuthModule],
  providers: [{ provide: PrincipalCache, useExisting: PrincipalResolverService }],
  exports: [PrincipalCache],
})
export class PrincipalCacheModule {}
