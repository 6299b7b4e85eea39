import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BrandingController } from './branding.controller';
import { BrandingRepository } from './branding.repository';
import { BrandingService } from './branding.service';
import { PartnerLoginBrandingEntity } from './partner-login-branding.entity';

@Module({
  imports: [TypeOrmModule.forFeature([PartnerLoginBrandingEntity])],
  controllers: [BrandingController],
  providers: [BrandingService, BrandingRepository],
  exports: [BrandingService],
})
export class BrandingModule {}
